// Package jsonrpc is the gateway's JSON-RPC 2.0 codec: it parses what callers
// send, encodes what the gateway answers, and carries calls to and from
// upstream nodes.
//
// The package is deliberately byte-oriented. Request ids, params, results and
// error data stay as raw JSON slices of the bodies they came from, because:
//   - ids must be echoed exactly as sent (1, 1.0, "1" and 1e0 are different
//     ids to a client that matches on the bytes it wrote);
//   - params and results are opaque to the gateway: decoding them into
//     map[string]any would cost allocations on every call and could alter
//     them (big integers turning into floats, key order, escapes);
//   - slices of an already validated body need no copy and no re-validation.
//
// The flip side: a Message, Item, Reply or Response obtained from this package
// aliases the body it was parsed from, so that body must not be modified or
// reused while they are in use.
//
// Wire decisions (HTTP status and JSON-RPC code for every outcome) are
// listed on Parse, BodyTooLarge and the Code constants.
package jsonrpc
