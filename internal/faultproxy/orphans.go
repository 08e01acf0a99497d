package faultproxy

import (
	"encoding/json"
	"net/http"
	"strings"
)

// OrphanTx makes the proxy a node still on a branch a reorg replaced: a
// transaction or receipt asked by the hash tx is answered from block, the
// replaced block that held it (its status, logs, blockHash and
// blockNumber), as the target serves that block by its hash — true of a
// block no longer on the chain. OrphanAnswers counts such answers.
func (p *Proxy) OrphanTx(tx, block string) {
	p.orphanOf.Store(strings.ToLower(tx), block)
	p.orphans.Store(true)
}

// fromOrphan rewrites r, the answer to m with params, with the orphan
// block's transaction or receipt when the transaction asked is one of
// OrphanTx's.
func (p *Proxy) fromOrphan(m string, params []any, r *reply) {
	if (m != "eth_getTransactionReceipt" && m != "eth_getTransactionByHash") || len(params) != 1 || r.Error != nil {
		return
	}
	tx, _ := params[0].(string)
	block, ok := p.orphanOf.Load(strings.ToLower(tx))
	if !ok {
		return
	}
	var list []json.RawMessage
	if m == "eth_getTransactionReceipt" {
		list = p.targetList("eth_getBlockReceipts", `["`+block.(string)+`"]`, "")
	} else {
		list = p.targetList("eth_getBlockByHash", `["`+block.(string)+`",true]`, "transactions")
	}
	for _, x := range list {
		if strings.EqualFold(member(x, "transactionHash"), tx) || strings.EqualFold(member(x, "hash"), tx) {
			r.Result = x
			p.OrphanAnswers.Add(1)
			return
		}
	}
}

// targetList asks the target method(params) and reads its result as a
// list (of the member named in, if given).
func (p *Proxy) targetList(method, params, in string) []json.RawMessage {
	resp, err := http.Post(p.target, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+`}`))
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var r struct {
		Result json.RawMessage `json:"result"`
	}
	if json.NewDecoder(resp.Body).Decode(&r) != nil {
		return nil
	}
	res := r.Result
	if in != "" {
		var obj map[string]json.RawMessage
		if json.Unmarshal(res, &obj) != nil {
			return nil
		}
		res = obj[in]
	}
	var list []json.RawMessage
	_ = json.Unmarshal(res, &list)
	return list
}

// member is a string member of an object.
func member(obj json.RawMessage, key string) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil {
		return ""
	}
	var s string
	_ = json.Unmarshal(m[key], &s)
	return s
}
