// Package subscribe is the upstream side of eth_subscribe: the Hub holds one
// upstream subscription per distinct (chain, kind, canonical filter) and fans
// its notifications out to every subscriber (Sub) that asked for the same
// thing, so 500 callers watching newHeads cost one upstream subscription.
//
// The client side (caddymodule/wsrpc: the socket on /rpc, ids, metering) codes
// against Hub.Subscribe, Sub.C, Sub.Err and Sub.Close; the WebSocket library of
// both sides is github.com/gorilla/websocket.
//
// Delivery never blocks the hub: a notification is offered to each Sub's
// buffered channel, and a Sub whose buffer is full is ended with
// ErrSlowReader while the others keep receiving. A Sub therefore holds at most
// its buffer's worth of notifications (buffer × the largest notification,
// itself capped by Config.MaxMessageBytes), whatever the reader does.
//
// An upstream subscription survives its upstream: when the socket fails, a
// ping goes unanswered or (newHeads) no head arrives for Config.StallBlocks
// block times, the hub subscribes on another upstream of the chain's pool
// that has a ws URL (upstream.Pool.PickWS) and the Subs keep their channel.
// newHeads carry no gap and no duplicate across the switch: the hub tracks
// the last delivered block, drops heads already delivered, and fills a gap
// from eth_getBlockByNumber on the new upstream. logs are deduplicated by
// (blockHash, logIndex, removed) over a bounded window and the missed range is
// filled from eth_getLogs. Every notification names the upstream that
// produced it (Notification.ServedBy) so its revenue goes there.
//
// Dialling goes through upstream.WSTarget.Dial: a registered node's ws URL
// gets the same address policy as its HTTP URL, checked at every dial, and
// URLs and headers never leave the upstream package.
package subscribe
