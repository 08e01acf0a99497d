package wsrpc

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/metrics"
	"github.com/tollgate-rpc/tollgate/caddymodule/subscribe"
	"github.com/tollgate-rpc/tollgate/shared/events"
)

// Notification is one message of a subscription and the upstream that
// produced it (its revenue goes there).
type Notification = subscribe.Notification

// Subscription kinds the socket accepts.
var kinds = map[string]bool{"newHeads": true, "logs": true, "newPendingTransactions": true}

// Methods answered by the socket itself rather than the HTTP path.
const (
	methodSubscribe    = "eth_subscribe"
	methodUnsubscribe  = "eth_unsubscribe"
	methodNotification = "eth_subscription" // what a notification is charged as
)

// handle answers one message from the client.
func (c *conn) handle(data []byte) {
	msg, rej := jsonrpc.Parse(data, jsonrpc.Options{MaxBatch: c.s.cfg.MaxBatch})
	if rej != nil {
		c.reply(rej.Body())
		return
	}
	local := false
	for i := range msg.Items {
		if m := msg.Items[i].Method; msg.Items[i].Valid() && (m == methodSubscribe || m == methodUnsubscribe) {
			local = true
		}
	}
	if !local {
		// The common case: the message is served as it is.
		a := c.s.cfg.Serve(c.ctx, &c.who, c.chain, msg)
		if a.Refusal == nil && answered(a.Status, a.Body) {
			c.reply(a.Body)
			return
		}
		out, _ := jsonrpc.EncodeAnswer(msg, answersFor(msg, a))
		c.reply(out)
		return
	}
	resps := make([]jsonrpc.Response, len(msg.Items))
	var fwd []jsonrpc.Item
	var at []int
	var started []*clientSub
	for i := range msg.Items {
		it := &msg.Items[i]
		if !it.Valid() {
			continue
		}
		switch it.Method {
		case methodSubscribe:
			var cs *clientSub
			resps[i], cs = c.subscribe(it)
			if cs != nil {
				started = append(started, cs)
			}
		case methodUnsubscribe:
			resps[i] = c.unsubscribe(it)
		default:
			fwd = append(fwd, *it)
			at = append(at, i)
		}
	}
	if len(fwd) > 0 {
		sub := &jsonrpc.Message{Batch: true, Items: fwd}
		a := c.s.cfg.Serve(c.ctx, &c.who, c.chain, sub)
		for k, r := range answersFor(sub, a) {
			resps[at[k]] = r
		}
	}
	out, status := jsonrpc.EncodeAnswer(msg, resps)
	if status != http.StatusNoContent {
		c.reply(out)
	}
	// The answer naming a subscription is queued before its first
	// notification can be.
	for _, cs := range started {
		close(cs.gate)
	}
}

// clientSub is one eth_subscribe of this socket.
type clientSub struct {
	id     string
	sub    Sub
	gate   chan struct{} // closed once the eth_subscribe answer is queued
	stop   chan struct{} // closed by drop
	exited chan struct{} // closed when the pump has returned
}

// subscribe opens a client subscription: checks the caps, charges the call
// (eth_subscribe's weight, revenue of the gateway itself, like a cached
// answer: no upstream answers it to the client) and asks the hub.
func (c *conn) subscribe(it *jsonrpc.Item) (jsonrpc.Response, *clientSub) {
	id := it.ResponseID()
	fail := func(e *jsonrpc.Error) (jsonrpc.Response, *clientSub) {
		metrics.WSSubscribeRefused.WithLabelValues(strconv.Itoa(e.Code)).Inc()
		return jsonrpc.ErrorResponse(id, e), nil
	}
	if c.s.cfg.Subscribe == nil {
		return fail(jsonrpc.MethodNotFound(methodSubscribe))
	}
	var params []json.RawMessage
	if err := json.Unmarshal(it.Params, &params); err != nil || len(params) == 0 || len(params) > 2 {
		return fail(jsonrpc.InvalidParams(`want ["newHeads"], ["logs", {filter}] or ["newPendingTransactions"]`))
	}
	var kind string
	if json.Unmarshal(params[0], &kind) != nil || !kinds[kind] {
		return fail(jsonrpc.InvalidParams("subscription kind must be newHeads, logs or newPendingTransactions"))
	}
	var filter json.RawMessage
	if len(params) == 2 {
		if kind == "newHeads" {
			return fail(jsonrpc.InvalidParams("newHeads takes no parameters"))
		}
		filter = params[1] // the logs filter, or newPendingTransactions' full-transactions flag (the hub checks both)
	}
	c.mu.Lock()
	n := len(c.subs)
	c.mu.Unlock()
	lim := c.s.cfg.Limits
	if n >= lim.MaxSubscriptions {
		return fail(jsonrpc.SubscriptionCap("connection", lim.MaxSubscriptions,
			"this socket has "+strconv.Itoa(n)+" subscriptions, the most one connection may hold; unsubscribe first"))
	}
	if !c.s.takeSub(c.ip) {
		return fail(jsonrpc.SubscriptionCap("address", lim.MaxSubscriptionsPerIP,
			"this address holds "+strconv.Itoa(lim.MaxSubscriptionsPerIP)+" subscriptions, the most one address may hold"))
	}
	ticket, ref := c.s.cfg.Charge(c.ctx, &c.who, c.chain, methodSubscribe)
	if ref != nil {
		c.s.giveSub(c.ip)
		return fail(ref.JSONRPC())
	}
	sub, err := c.s.cfg.Subscribe(c.chain, kind, filter, lim.SendBuffer)
	if err != nil {
		ticket(events.ServedByCache, false, nil)
		c.s.giveSub(c.ip)
		code := jsonrpc.CodeInternalError
		if c.s.cfg.SubscribeError != nil {
			code = c.s.cfg.SubscribeError(err)
		}
		return fail(&jsonrpc.Error{Code: code, Message: "cannot subscribe: " + err.Error()})
	}
	ticket(events.ServedByCache, true, nil)
	c.mu.Lock()
	cs := &clientSub{id: subID(), sub: sub, gate: make(chan struct{}), stop: make(chan struct{}), exited: make(chan struct{})}
	c.subs[cs.id] = cs
	c.mu.Unlock()
	go c.pump(cs)
	metrics.WSSubscriptions.Inc()
	idJSON, _ := json.Marshal(cs.id)
	return jsonrpc.ResultResponse(id, idJSON), cs
}

// unsubscribe ends one of this socket's subscriptions (free: it reaches
// neither the meter nor an upstream).
func (c *conn) unsubscribe(it *jsonrpc.Item) jsonrpc.Response {
	var params []string
	if err := json.Unmarshal(it.Params, &params); err != nil || len(params) != 1 {
		return jsonrpc.ErrorResponse(it.ResponseID(), jsonrpc.InvalidParams("want [subscription id]"))
	}
	ok := c.drop(params[0])
	return jsonrpc.ResultResponse(it.ResponseID(), json.RawMessage(strconv.FormatBool(ok)))
}

// drop ends subscription id; false when this socket holds none by that id.
func (c *conn) drop(id string) bool {
	c.mu.Lock()
	cs, ok := c.subs[id]
	if ok {
		delete(c.subs, id)
	}
	c.mu.Unlock()
	if !ok {
		return false
	}
	close(cs.stop)
	// The pump may be charging a notification it took: it queues it, then
	// sees stop. Waiting for it makes the eth_unsubscribe answer the last
	// message of the subscription.
	<-cs.exited
	cs.sub.Close()
	c.s.giveSub(c.ip)
	metrics.WSSubscriptions.Dec()
	return true
}

func (c *conn) closeSubs() {
	c.mu.Lock()
	ids := make([]string, 0, len(c.subs))
	for id := range c.subs {
		ids = append(ids, id)
	}
	c.mu.Unlock()
	for _, id := range ids {
		c.drop(id)
	}
}

// pump delivers a subscription's notifications, each paid for before it is
// queued: a slot of the send buffer is held first (no room: the client is
// cut off, nothing charged), then the payer is charged (refused: the
// tollgate_closing message and the close code, nothing more delivered),
// then the notification is queued; the writer settles the charge as
// revenue of the upstream that produced it once written, or refunds it.
func (c *conn) pump(cs *clientSub) {
	defer close(cs.exited)
	select {
	case <-cs.gate:
	case <-cs.stop:
		return
	case <-c.quit:
		return
	}
	for {
		var n Notification
		var ok bool
		select {
		case <-c.quit:
			return
		case <-cs.stop:
			return
		case n, ok = <-cs.sub.C():
		}
		if !ok {
			err := cs.sub.Err()
			if err == nil { // closed by this socket (eth_unsubscribe, the end)
				return
			}
			code := CloseInternal
			if c.s.cfg.EndCode != nil {
				code = c.s.cfg.EndCode(err)
			}
			if code == CloseSlowReader {
				c.slow()
			} else {
				c.shutdown(code, "subscription "+cs.id+" ended: "+err.Error(), nil, true)
			}
			return
		}
		if !c.reserve() {
			c.slow()
			return
		}
		ticket, ref := c.s.cfg.Charge(c.ctx, &c.who, c.chain, methodNotification)
		if ref != nil {
			c.unreserve()
			status := ref.Status()
			e := ref.JSONRPC()
			code := closeFor(status)
			metrics.WSNotifications.WithLabelValues("refused").Inc()
			c.shutdown(code, reasonWord(status), closing(code, reasonWord(status), e), true)
			return
		}
		by, credit := n.ServedBy, n.Credit
		c.sendReserved(frame{data: notification(cs.id, n.Result), done: func(delivered bool) {
			// The upstream earns once per message, with the first
			// delivered copy that pays; the other copies are the
			// platform's fan-out (each caller pays for its own copy all
			// the same).
			ticket(by, delivered, credit.Take)
			if delivered {
				metrics.WSNotifications.WithLabelValues("delivered").Inc()
			} else {
				metrics.WSNotifications.WithLabelValues("dropped_refunded").Inc()
			}
		}})
	}
}

func reasonWord(status int) string {
	switch status {
	case http.StatusPaymentRequired:
		return "payment_required"
	case http.StatusUnauthorized:
		return "unauthorized"
	case http.StatusTooManyRequests:
		return "rate_limited"
	}
	return "metering_unavailable"
}

// subID is a random subscription id (16 bytes, hex, like geth's): it stays
// the client's whatever upstream the hub moves the subscription to.
func subID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "0x" + hex.EncodeToString(b[:])
}
