// Package mcp is the gateway's MCP server: POST /mcp speaks the Model
// Context Protocol (Streamable HTTP, official Go SDK) and offers chain
// access as tools an agent calls, paid exactly like /rpc.
//
// A tool builds the JSON-RPC calls it needs and hands them to the gateway's
// core as one parsed JSON-RPC batch on the chain's /rpc path (Backend.Serve,
// in process): the same payers in the same order read the same headers, so a tool call is one
// metering decision however many calls it makes, is refunded when an
// upstream fails and records revenue like any request. This room only
// translates: MCP arguments into calls (checked first, so a wrong argument
// is a tool error that costs nothing), an x402 payment in
// params._meta["x402/payment"] into the payment header, and the answer —
// results, a 402 challenge, a refusal — into a tool result
// (the x402 tool-result binding for MCP).
//
// The server is stateless (no Mcp-Session-Id): any gateway instance serves
// any request, as for /rpc, and nothing lives between two requests.
package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/caddymodule/evm"
	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/payment"
	"github.com/tollgate-rpc/tollgate/caddymodule/web"
	"github.com/tollgate-rpc/tollgate/shared/chains"
	"github.com/tollgate-rpc/tollgate/shared/meter"
)

// Path is where the server answers.
const Path = "/mcp"

// Limits of one MCP HTTP request. Tool arguments are small (the largest is
// a raw transaction for rpc's eth_sendRawTransaction); a client that sends
// more is refused before the SDK decodes anything.
const (
	MaxBodyBytes = 256 << 10
	// MaxBatch bounds a JSON-RPC batch of MCP messages (revision 2025-03-26
	// allows batches; later ones refuse them, which the SDK enforces). Each
	// tool call in a batch is its own paid decision.
	MaxBatch = 16
)

// Backend is what the room needs of the gateway; the hall implements it.
type Backend interface {
	// Chains is the configured chain table.
	Chains() *chains.Table
	// Method is the method table's entry for method on the chain.
	Method(chainID uint64, method string) evm.Method
	// Serve serves msg (a parsed JSON-RPC batch) on the chain in process,
	// exactly as POST /rpc/{chain} serves it: payers, metering, cache,
	// upstreams, refunds, revenue. who asks is read from the tool call's
	// request and _meta (its path names the resource a 402 offers); hdr
	// takes what the payers hand the caller (remaining credits, a
	// settlement, a bundle key).
	Serve(ctx context.Context, who *payment.Caller, hdr http.Header, chainID uint64, msg *jsonrpc.Message) Served
	// Limits are POST's: the largest body and batch it parses.
	Limits() (maxBody int64, maxBatch int)
	// Head is the chain's best head the gateway knows (0 when unknown),
	// read without an upstream call.
	Head(chainID uint64) uint64
	// Meter is the metering store (nil when the gateway runs unmetered).
	Meter() *meter.Meter
	// Document writes one of the gateway's discovery documents (its GET
	// path) to w as the caller of r would get it.
	Document(w http.ResponseWriter, r *http.Request, path string) error
}

// Served is what serving a tool's batch came to: one response per call, in
// order, with the status POST would send (200, or 503 when no upstream
// could serve any call); or the typed refusal that served none. Booked
// says a payer was booked for some of the calls and Charged is the units
// it kept paying for (booked minus refunded): what the result's _meta
// says was charged. Calls the gateway answers itself (eth_chainId) or
// refuses before metering (a method name over the parser's limit) are
// neither.
type Served struct {
	Resps   []jsonrpc.Response
	Status  int
	Refusal *payment.Refusal
	Booked  bool
	Charged int
}

// Server is the /mcp handler.
type Server struct {
	backend Backend
	logger  *zap.Logger
	sdk     *sdk.Server
	handler http.Handler
	// requests maps the token the handler stamps on a request to the
	// request: a tool handler sees only the headers (RequestExtra), and the
	// payers need the whole request (its address, Caddy's variables).
	requests sync.Map
	// seq numbers the requests for those tokens: a token only has to be
	// unique among the requests in flight (a client's own header of that
	// name is dropped first, so none can name another's request).
	seq atomic.Uint64
}

// corsHeaders are the request headers a browser may send to /mcp: the
// protocol's and the payers'.
const corsHeaders = "Content-Type, Accept, Authorization, Mcp-Protocol-Version, Mcp-Session-Id, Mcp-Method, Mcp-Name, Last-Event-ID, " +
	"X-API-Key, SIGN-IN-WITH-X, PAYMENT-SIGNATURE, X-PAYMENT"

// originHeader carries the token of the HTTP request a tool call came in;
// whatever a client sends under this name is dropped first.
const originHeader = "X-Tollgate-Mcp-Origin"

// New builds the server and registers its tools and resources.
func New(b Backend, version string, logger *zap.Logger) *Server {
	s := &Server{backend: b, logger: logger}
	s.sdk = sdk.NewServer(&sdk.Implementation{Name: "tollgate", Title: "Tollgate RPC gateway", Version: version}, &sdk.ServerOptions{
		Instructions: instructions,
	})
	s.addTools()
	s.addResources()
	s.handler = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.sdk }, &sdk.StreamableHTTPOptions{
		Stateless:    true,
		JSONResponse: true,
		// The endpoint is a public service whose credentials are headers
		// the caller sets (no cookies): a DNS-rebinding page gains nothing
		// a direct request does not have, and a gateway behind a local
		// reverse proxy sees every request arrive on loopback.
		DisableLocalhostProtection: true,
		MaxRequestBodyBytes:        MaxBodyBytes,
	})
	return s
}

// instructions is what the server tells a model about itself at initialize.
const instructions = `Tollgate is a metered JSON-RPC gateway to EVM chains. Every tool takes an optional "chain" (a name such as "base" or an id such as "8453"; chain_info lists them). Paid tools cost the JSON-RPC calls they make at the gateway's price per call; chain_info and account are free. Pay with an X-API-Key header (prepaid credits), a SIGN-IN-WITH-X header (a wallet's x402 bundle), an x402 payment in params._meta["x402/payment"] after a tool result that asks for one, or the free tier of your IP address.`

// ServeHTTP answers one MCP HTTP request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r.Header.Del(originHeader)
	// CORS: like /rpc, /mcp takes no cookies (credentials are headers the
	// caller sets), so a browser agent on any origin may call it.
	hdr := w.Header()
	hdr.Set("Access-Control-Allow-Origin", "*")
	hdr.Set("Access-Control-Expose-Headers", "Mcp-Session-Id, Mcp-Protocol-Version")
	if r.Method == http.MethodOptions {
		hdr.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
		hdr.Set("Access-Control-Allow-Headers", corsHeaders)
		hdr.Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if r.Method == http.MethodPost {
		body, err := web.ReadLimited(r.Body, MaxBodyBytes)
		switch {
		case errors.Is(err, web.ErrTooLarge):
			protocolError(w, http.StatusRequestEntityTooLarge, codeInvalidRequest, "request body over "+strconv.Itoa(MaxBodyBytes)+" bytes")
			return
		case errors.Is(err, web.ErrBodyTimeout):
			// As on /rpc: a body that trickles in is cut at body_timeout.
			w.Header().Set("Connection", "close")
			protocolError(w, http.StatusRequestTimeout, codeInvalidRequest, "the request body did not arrive in time")
			return
		case err != nil:
			protocolError(w, http.StatusBadRequest, codeParseError, "the request body could not be read")
			return
		}
		if code, msg := checkMessage(body); msg != "" {
			protocolError(w, http.StatusBadRequest, code, msg)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		tok := strconv.FormatUint(s.seq.Add(1), 36)
		r.Header.Set(originHeader, tok)
		s.requests.Store(tok, r)
		defer s.requests.Delete(tok)
	}
	pw := &plainErrors{ResponseWriter: w}
	s.handler.ServeHTTP(pw, r)
	pw.flush()
}

// plainErrors turns the SDK's plain-text refusals (a method it does not
// handle, a batch in a revision without batches, a wrong Accept header)
// into the protocol's shape, a JSON-RPC error object with the same status
// and text, so every error a client gets from /mcp is one it can parse.
type plainErrors struct {
	http.ResponseWriter
	status int          // a plain-text error's status, held back
	text   bytes.Buffer // and its text
}

func (p *plainErrors) WriteHeader(status int) {
	if status >= 400 && p.status == 0 && strings.HasPrefix(p.Header().Get("Content-Type"), "text/plain") {
		p.status = status
		return
	}
	p.ResponseWriter.WriteHeader(status)
}

func (p *plainErrors) Write(b []byte) (int, error) {
	if p.status != 0 {
		if p.text.Len() < 1024 {
			p.text.Write(b)
		}
		return len(b), nil
	}
	return p.ResponseWriter.Write(b)
}

// Flush lets the SDK stream (an SSE answer) through the wrapper.
func (p *plainErrors) Flush() {
	if f, ok := p.ResponseWriter.(http.Flusher); ok && p.status == 0 {
		f.Flush()
	}
}

func (p *plainErrors) Unwrap() http.ResponseWriter { return p.ResponseWriter }

func (p *plainErrors) flush() {
	if p.status == 0 {
		return
	}
	msg := strings.TrimSpace(p.text.String())
	code := codeInvalidRequest
	if strings.Contains(msg, "not handled") || strings.Contains(msg, "unsupported") {
		code = codeMethodNotFound
	}
	p.Header().Del("Content-Length")
	p.Header().Del("X-Content-Type-Options")
	protocolError(p.ResponseWriter, p.status, code, msg)
}

// JSON-RPC error codes of the protocol's own errors.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
)

// checkMessage refuses, before the SDK sees it, a body that is not JSON
// (codeParseError) or a batch that is empty or larger than MaxBatch
// (codeInvalidRequest): msg is "" when the body may go on.
func checkMessage(body []byte) (code int, msg string) {
	if !json.Valid(body) {
		return codeParseError, "the body is not valid JSON"
	}
	b := bytes.TrimLeft(body, " \t\r\n")
	if len(b) == 0 || b[0] != '[' {
		return 0, ""
	}
	var items []json.RawMessage
	if err := json.Unmarshal(b, &items); err != nil {
		return codeInvalidRequest, "the batch is not a JSON array"
	}
	if len(items) == 0 {
		return codeInvalidRequest, "empty batch"
	}
	if len(items) > MaxBatch {
		return codeInvalidRequest, "a batch of " + strconv.Itoa(len(items)) + " messages; at most " + strconv.Itoa(MaxBatch) + " (send tool calls one by one)"
	}
	return 0, ""
}

// protocolError answers a request the server cannot take with a JSON-RPC
// error object (id null: the request was not read).
func protocolError(w http.ResponseWriter, status, code int, msg string) {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": msg}})
	web.Raw(w, status, body)
}

// origin is the HTTP request a tool call came in.
func (s *Server) origin(extra *sdk.RequestExtra) (*http.Request, bool) {
	if extra == nil || extra.Header == nil {
		return nil, false
	}
	v, ok := s.requests.Load(extra.Header.Get(originHeader))
	if !ok {
		return nil, false
	}
	return v.(*http.Request), true
}
