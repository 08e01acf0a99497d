package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	segjson "github.com/segmentio/encoding/json"
)

// The rpc tool is registered with the SDK's raw AddTool, not its typed
// one: the typed path decodes the arguments into a map, validates the map
// against the input schema, encodes it again and decodes that into the
// tool's input, on every call (two of the SDK's JSON decoders, each with a
// fresh 32 KiB buffer, and a schema walk, in make bench's profile of an MCP
// tool call). rawTool does the same, in the same order, with the same schema,
// decoder and messages, so a client sees the same tools/list and the same
// result for any arguments; but for the arguments an agent sends (an
// object of the known keys with values of their types, plain strings) it
// decodes once into the input and checks the types itself (fast).
type rawTool[In any] struct {
	resolved *jsonschema.Resolved
	// fast is In read from arguments when it is sure to be what the
	// SDK's path gives, false when unsure (that path then runs).
	fast func(args map[string]any) (In, bool)
	h    func(context.Context, *sdk.CallToolRequest, In) *sdk.CallToolResult
}

// addRaw registers a tool as add does, through rawTool: the tool and its
// input schema are those sdk.AddTool would register.
func addRaw[In any](s *Server, name string, readOnly bool, h func(context.Context, *sdk.CallToolRequest, In) *sdk.CallToolResult, fast func(map[string]any) (In, bool)) {
	schema, err := jsonschema.ForType(reflect.TypeFor[In](), &jsonschema.ForOptions{})
	if err != nil {
		panic(fmt.Sprintf("tool %s: input schema: %v", name, err))
	}
	resolved, err := schema.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	if err != nil {
		panic(fmt.Sprintf("tool %s: input schema: %v", name, err))
	}
	t := &sdk.Tool{Name: name, Description: describe(name), InputSchema: schema,
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: readOnly, OpenWorldHint: ptr(true)}}
	rt := &rawTool[In]{resolved: resolved, fast: fast, h: h}
	s.sdk.AddTool(t, rt.handle)
}

func (t *rawTool[In]) handle(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	var input json.RawMessage
	if req.Params.Arguments != nil {
		input = req.Params.Arguments
	}
	if in, ok := t.quick(input); ok {
		return t.h(ctx, req, in), nil
	}
	// The SDK's typed path (go-sdk v1.8.0, mcp.toolForErr), step by step.
	input, err := applyInputSchema(input, t.resolved)
	if err != nil {
		var res sdk.CallToolResult
		res.SetError(fmt.Errorf("validating \"arguments\": %v", err))
		return &res, nil
	}
	var in In
	if input != nil {
		if err := sdkUnmarshal(input, &in); err != nil {
			var res sdk.CallToolResult
			res.SetError(err)
			return &res, nil
		}
	}
	return t.h(ctx, req, in), nil
}

// quick decodes input once, as the SDK's first step does, and hands the
// object to fast. Only plain input is taken: valid UTF-8 with no escapes
// (every string then survives the SDK's encode and decode unchanged; an
// escape could decode to a string encoding/json would re-encode
// differently), nested no deeper than the SDK allows.
func (t *rawTool[In]) quick(input json.RawMessage) (In, bool) {
	var zero In
	if t.fast == nil || len(input) == 0 || bytes.IndexByte(input, '\\') >= 0 || !utf8.Valid(input) || checkMaxDepth(input, maxDepth) != nil {
		return zero, false
	}
	var args map[string]any
	rest, err := segjson.Parse(input, &args, segjson.DontMatchCaseInsensitiveStructFields)
	if err != nil || len(bytes.TrimSpace(rest)) != 0 || args == nil {
		return zero, false
	}
	return t.fast(args)
}

// rpcArgs is rpc's input when its arguments hold only the schema's keys
// with values of the schema's types (method a string and present, chain a
// string, params an array or null): then the schema admits them and the
// SDK's encode and decode give back these values.
func rpcArgs(args map[string]any) (rpcIn, bool) {
	var in rpcIn
	method, ok := args["method"].(string)
	if !ok {
		return in, false
	}
	in.Method = method
	for k, v := range args {
		switch k {
		case "method":
		case "chain":
			c, ok := v.(string)
			if !ok {
				return in, false
			}
			in.Chain = c
		case "params":
			switch p := v.(type) {
			case nil:
			case []any:
				in.Params = p
			default:
				return in, false
			}
		default:
			return in, false
		}
	}
	return in, true
}

// applyInputSchema is the SDK's applySchema for a tool's input (go-sdk
// v1.8.0, mcp/tool.go): decode into a map, apply defaults, validate,
// encode again.
func applyInputSchema(data json.RawMessage, resolved *jsonschema.Resolved) (json.RawMessage, error) {
	if resolved == nil {
		return data, nil
	}
	v := make(map[string]any)
	if len(data) > 0 {
		if err := sdkUnmarshal(data, &v); err != nil {
			return nil, fmt.Errorf("unmarshaling arguments: %w", err)
		}
	}
	var unmarshaled any = v
	if err := resolved.ApplyDefaults(&unmarshaled); err != nil {
		return nil, fmt.Errorf("applying schema defaults:\n%w", err)
	}
	if err := resolved.Validate(&unmarshaled); err != nil {
		return nil, err
	}
	out, err := json.Marshal(unmarshaled)
	if err != nil {
		return nil, fmt.Errorf("marshalling with defaults: %v", err)
	}
	return out, nil
}

// maxDepth and errMaxDepth are the SDK's JSON decoder's nesting limit and
// its error (go-sdk v1.8.0, internal/json).
const maxDepth = 1000

var errMaxDepth = fmt.Errorf("json: exceeded maximum nesting depth of %d", maxDepth)

// sdkUnmarshal is the SDK's JSON decoding (go-sdk v1.8.0,
// internal/json.Unmarshal): the depth check, then segmentio's decoder
// with struct fields matched case-sensitively.
func sdkUnmarshal(data []byte, v any) error {
	if err := checkMaxDepth(data, maxDepth); err != nil {
		return err
	}
	dec := segjson.NewDecoder(bytes.NewReader(data))
	dec.DontMatchCaseInsensitiveStructFields()
	return dec.Decode(v)
}

// checkMaxDepth is the SDK's: it counts '{' and '[' against '}' and ']'
// outside strings.
func checkMaxDepth(data []byte, limit int) error {
	var depth int
	var inString, escaped bool
	for _, b := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
			continue
		}
		switch b {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth > limit {
				return errMaxDepth
			}
		case '}', ']':
			if depth > 0 {
				depth--
			}
		}
	}
	return nil
}
