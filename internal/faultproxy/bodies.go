package faultproxy

import (
	"encoding/json"
	"strconv"
)

// BodyLie is which field a ShapeBody liar alters (SetBodyLie): one
// receipt field, a log, or one field of a block's transactions.
type BodyLie int32

const (
	BodyStatus          BodyLie = iota + 1 // eth_getTransactionReceipt: status flipped
	BodyLogData                            // eth_getTransactionReceipt: the first log's data is LieWord
	BodyCumulative                         // eth_getBlockReceipts: the first receipt's cumulativeGasUsed one more
	BodyGasUsed                            // eth_getTransactionReceipt: gasUsed one more (a derived field)
	BodyContractAddress                    // eth_getTransactionReceipt: contractAddress LieAddress (a derived field)
	BodyDropLog                            // eth_getTransactionReceipt: the last log dropped
	BodyAddLog                             // eth_getTransactionReceipt: the first log repeated at the end
	BodyTxField                            // eth_getBlockByNumber with transactions: the first one's value is LieBalance
	BodySwapHash                           // eth_getBlockByNumber with hashes: the first one is LieHash
)

// SetBodyLie sets what ShapeBody alters.
func (p *Proxy) SetBodyLie(b BodyLie) { p.bodyLie.Store(int32(b)) }

// BodyMethod is the method a ShapeBody liar lies in for b.
func BodyMethod(b BodyLie) string {
	switch b {
	case BodyCumulative:
		return "eth_getBlockReceipts"
	case BodyTxField, BodySwapHash:
		return "eth_getBlockByNumber"
	}
	return "eth_getTransactionReceipt"
}

// bodyLieable: the answer r to m has what the body lie alters.
func (p *Proxy) bodyLieable(m string, r *reply) bool {
	b := BodyLie(p.bodyLie.Load())
	if m != BodyMethod(b) {
		return false
	}
	switch b {
	case BodyCumulative:
		var rs []json.RawMessage
		return json.Unmarshal(r.Result, &rs) == nil && len(rs) > 0
	case BodyTxField, BodySwapHash:
		var blk struct {
			Transactions []json.RawMessage `json:"transactions"`
		}
		if json.Unmarshal(r.Result, &blk) != nil || len(blk.Transactions) == 0 {
			return false
		}
		hashOnly := len(blk.Transactions[0]) > 0 && blk.Transactions[0][0] == '"'
		return hashOnly == (b == BodySwapHash)
	case BodyLogData, BodyDropLog, BodyAddLog:
		var rc struct {
			Logs []json.RawMessage `json:"logs"`
		}
		return json.Unmarshal(r.Result, &rc) == nil && len(rc.Logs) > 0
	}
	var rc map[string]json.RawMessage
	return json.Unmarshal(r.Result, &rc) == nil && rc != nil
}

// bodyShapeLie alters r as the body lie says.
func (p *Proxy) bodyShapeLie(r *reply) {
	switch BodyLie(p.bodyLie.Load()) {
	case BodyStatus:
		status := `"0x0"`
		var rc struct {
			Status string `json:"status"`
		}
		if json.Unmarshal(r.Result, &rc) == nil && rc.Status == "0x0" {
			status = `"0x1"`
		}
		setMember(r, "status", json.RawMessage(status))
	case BodyLogData:
		editLogs(r, func(logs []map[string]json.RawMessage) []map[string]json.RawMessage {
			logs[0]["data"] = json.RawMessage(strconv.Quote(LieWord))
			return logs
		})
	case BodyDropLog:
		editLogs(r, func(logs []map[string]json.RawMessage) []map[string]json.RawMessage { return logs[:len(logs)-1] })
	case BodyAddLog:
		editLogs(r, func(logs []map[string]json.RawMessage) []map[string]json.RawMessage {
			extra := map[string]json.RawMessage{}
			for k, v := range logs[0] {
				extra[k] = v
			}
			return append(logs, extra)
		})
	case BodyGasUsed:
		var rc struct {
			GasUsed string `json:"gasUsed"`
		}
		_ = json.Unmarshal(r.Result, &rc)
		n, _ := strconv.ParseUint(trim0x(rc.GasUsed), 16, 64)
		setMember(r, "gasUsed", json.RawMessage(strconv.Quote("0x"+strconv.FormatUint(n+1, 16))))
	case BodyContractAddress:
		setMember(r, "contractAddress", json.RawMessage(strconv.Quote(LieAddress)))
	case BodyCumulative:
		var rs []map[string]json.RawMessage
		if json.Unmarshal(r.Result, &rs) != nil || len(rs) == 0 {
			return
		}
		var hex string
		_ = json.Unmarshal(rs[0]["cumulativeGasUsed"], &hex)
		n, _ := strconv.ParseUint(trim0x(hex), 16, 64)
		rs[0]["cumulativeGasUsed"] = json.RawMessage(strconv.Quote("0x" + strconv.FormatUint(n+1, 16)))
		r.Result, _ = json.Marshal(rs)
	case BodyTxField, BodySwapHash:
		var blk map[string]json.RawMessage
		var txs []json.RawMessage
		if json.Unmarshal(r.Result, &blk) != nil || json.Unmarshal(blk["transactions"], &txs) != nil || len(txs) == 0 {
			return
		}
		if BodyLie(p.bodyLie.Load()) == BodySwapHash {
			txs[0] = json.RawMessage(strconv.Quote(LieHash))
		} else {
			var tx map[string]json.RawMessage
			_ = json.Unmarshal(txs[0], &tx)
			tx["value"] = json.RawMessage(strconv.Quote(LieBalance))
			txs[0], _ = json.Marshal(tx)
		}
		blk["transactions"], _ = json.Marshal(txs)
		r.Result, _ = json.Marshal(blk)
	}
}

func editLogs(r *reply, f func([]map[string]json.RawMessage) []map[string]json.RawMessage) {
	var rc map[string]json.RawMessage
	var logs []map[string]json.RawMessage
	if json.Unmarshal(r.Result, &rc) != nil || json.Unmarshal(rc["logs"], &logs) != nil || len(logs) == 0 {
		return
	}
	rc["logs"], _ = json.Marshal(f(logs))
	r.Result, _ = json.Marshal(rc)
}
