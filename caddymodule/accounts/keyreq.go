package accounts

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/mail"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tollgate-rpc/tollgate/caddymodule/web"
)

// maxKeyRequestBytes bounds a key-creation body; a valid one is well under 1 KiB.
const maxKeyRequestBytes = 4 << 10

// keyRequest is a validated body of POST /api/keys or /v1/machine/register.
type keyRequest struct {
	Label        string
	Tier         string
	Email        string
	EmailConsent bool
}

// parseKeyRequest checks a key-creation body strictly: one JSON object,
// known fields only, each at most once and of the right type. A machine
// registration carries only a label; an API key request also needs tier
// "free" and may carry email and email_consent. Strictness is the point: a
// typo such as "emial" must be an error, not a key created without the
// consent the caller thought they gave.
func parseKeyRequest(body []byte, machine bool) (keyRequest, *web.FieldError) {
	var kr keyRequest
	bodyErr := func(msg string) *web.FieldError {
		return &web.FieldError{Field: "body", Code: "invalid_json", Message: msg}
	}
	if !utf8.Valid(body) {
		return kr, bodyErr("must be UTF-8 JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return kr, bodyErr(`must be a JSON object such as {"label":"my app","tier":"free"}`)
	}
	allowed := map[string]bool{"label": true}
	if !machine {
		allowed["tier"], allowed["email"], allowed["email_consent"] = true, true, true
	}
	seen := map[string]bool{}
	var hasEmail, consentSet bool
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return kr, bodyErr("is not valid JSON")
		}
		name, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return kr, bodyErr("is not valid JSON")
		}
		if !allowed[name] {
			return kr, &web.FieldError{Field: web.Printable(name), Code: "unknown_field", Message: "unknown field; allowed: " + allowedList(machine)}
		}
		if seen[name] {
			return kr, &web.FieldError{Field: name, Code: "duplicate_field", Message: "given more than once"}
		}
		seen[name] = true
		isNull := string(raw) == "null"
		switch name {
		case "label":
			if err := json.Unmarshal(raw, &kr.Label); err != nil || isNull {
				return kr, &web.FieldError{Field: name, Code: "invalid_field", Message: "must be a string"}
			}
		case "tier":
			if err := json.Unmarshal(raw, &kr.Tier); err != nil || isNull {
				return kr, &web.FieldError{Field: name, Code: "invalid_field", Message: `must be the string "free"`}
			}
		case "email":
			if isNull {
				continue
			}
			if err := json.Unmarshal(raw, &kr.Email); err != nil {
				return kr, &web.FieldError{Field: name, Code: "invalid_field", Message: "must be a string"}
			}
			hasEmail = true
		case "email_consent":
			if isNull {
				continue
			}
			if err := json.Unmarshal(raw, &kr.EmailConsent); err != nil {
				return kr, &web.FieldError{Field: name, Code: "invalid_field", Message: "must be true or false"}
			}
			consentSet = true
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return kr, bodyErr("is not valid JSON")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return kr, bodyErr("must hold exactly one JSON object")
	}

	if !seen["label"] {
		return kr, &web.FieldError{Field: "label", Code: "missing_field", Message: "is required (1 to 64 characters)"}
	}
	if n := utf8.RuneCountInString(kr.Label); n < 1 || n > 64 || strings.TrimSpace(kr.Label) == "" {
		return kr, &web.FieldError{Field: "label", Code: "invalid_field", Message: "must be 1 to 64 characters, not only spaces"}
	}
	if strings.ContainsFunc(kr.Label, unicode.IsControl) {
		return kr, &web.FieldError{Field: "label", Code: "invalid_field", Message: "must not contain control characters"}
	}
	if machine {
		kr.Tier = "free"
		return kr, nil
	}
	if !seen["tier"] {
		return kr, &web.FieldError{Field: "tier", Code: "missing_field", Message: `is required and must be "free"`}
	}
	if kr.Tier != "free" {
		return kr, &web.FieldError{Field: "tier", Code: "invalid_field", Message: `must be "free" (the only tier keys are created with)`}
	}
	if hasEmail && !validEmail(kr.Email) {
		return kr, &web.FieldError{Field: "email", Code: "invalid_field", Message: "must be a valid email address such as dev@example.com"}
	}
	if consentSet && kr.EmailConsent && !hasEmail {
		return kr, &web.FieldError{Field: "email_consent", Code: "invalid_field", Message: "true needs an email"}
	}
	return kr, nil
}

func allowedList(machine bool) string {
	if machine {
		return "label"
	}
	return "label, tier, email, email_consent"
}

// validEmail accepts a bare addr-spec (no display name, no comments) with a
// dotted domain, at most 254 bytes.
func validEmail(s string) bool {
	if len(s) < 3 || len(s) > 254 || strings.ContainsAny(s, " \t\r\n<>\"()") {
		return false
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Name != "" || a.Address != s {
		return false
	}
	at := strings.LastIndexByte(s, '@')
	domain := s[at+1:]
	return at > 0 && strings.Contains(domain, ".") && !strings.HasPrefix(domain, ".") && !strings.HasSuffix(domain, ".")
}
