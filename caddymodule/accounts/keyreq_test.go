package accounts

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestParseKeyRequest(t *testing.T) {
	ok := []struct {
		body    string
		machine bool
		want    keyRequest
	}{
		{`{"label":"my app","tier":"free"}`, false, keyRequest{Label: "my app", Tier: "free"}},
		{` {"tier":"free","label":"ünïcødé ✓","email":"dev@example.com","email_consent":true} `, false,
			keyRequest{Label: "ünïcødé ✓", Tier: "free", Email: "dev@example.com", EmailConsent: true}},
		{`{"label":"x","tier":"free","email":null,"email_consent":false}`, false, keyRequest{Label: "x", Tier: "free"}},
		{`{"lab\u0065l":"escaped name","tier":"free"}`, false, keyRequest{Label: "escaped name", Tier: "free"}},
		{`{"label":"` + strings.Repeat("é", 64) + `"}`, true, keyRequest{Label: strings.Repeat("é", 64), Tier: "free"}},
	}
	for _, c := range ok {
		got, err := parseKeyRequest([]byte(c.body), c.machine)
		if err != nil || got != c.want {
			t.Errorf("%s: %+v %v", c.body, got, err)
		}
	}
	bad := []struct {
		body    string
		machine bool
		field   string
	}{
		{"\xff{}", false, "body"},
		{``, false, "body"},
		{`null`, false, "body"},
		{`{"label":"a","tier":"free"`, false, "body"},
		{`{"label":"a","tier":"free"}x`, false, "body"},
		{`{"label":"` + strings.Repeat("é", 65) + `","tier":"free"}`, false, "label"},
		{`{"label":"a\nb","tier":"free"}`, false, "label"},
		{`{"label":"a","tier":"FREE"}`, false, "tier"},
		{`{"label":"a","tier":"free","email":"a@b"}`, false, "email"},
		{`{"label":"a","tier":"free","email":"a@b.c","email":"a@b.c"}`, false, "email"},
		{`{"label":"a","tier":"free","email_consent":1}`, false, "email_consent"},
		{`{"label":"a","tier":"free","\u0000":1}`, false, `\x00`},
	}
	for _, c := range bad {
		_, err := parseKeyRequest([]byte(c.body), c.machine)
		if err == nil || err.Field != c.field || err.Code == "" {
			t.Errorf("%q: %+v", c.body, err)
		}
	}
}

// FuzzParseKeyRequest: the key-creation body parser never panics, accepts
// only what the rules allow, names a field in every rejection, and accepts
// again what it accepted once, re-encoded.
func FuzzParseKeyRequest(f *testing.F) {
	for _, s := range []string{
		`{"label":"my app","tier":"free"}`,
		`{"label":"x","tier":"free","email":"dev@example.com","email_consent":true}`,
		`{"label":"x"}`, `{"label":null}`, `[]`, `{"a":{"b":[1,2,{}]}}`, `{"label":"a","label":"b"}`,
		`{"label":"\ud800","tier":"free"}`, `{"email":"\"quoted\"@example.com","label":"q","tier":"free"}`,
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, body []byte, machine bool) {
		kr, err := parseKeyRequest(body, machine)
		if err != nil {
			if err.Field == "" || err.Code == "" || !strings.Contains(err.Error(), err.Field) {
				t.Fatalf("rejection without a field: %+v", err)
			}
			return
		}
		if n := utf8.RuneCountInString(kr.Label); n < 1 || n > 64 || strings.TrimSpace(kr.Label) == "" || strings.ContainsFunc(kr.Label, unicode.IsControl) {
			t.Fatalf("accepted label %q", kr.Label)
		}
		if kr.Tier != "free" || (kr.Email != "" && !validEmail(kr.Email)) || (kr.EmailConsent && kr.Email == "") {
			t.Fatalf("accepted %+v", kr)
		}
		if machine && (kr.Email != "" || kr.EmailConsent) {
			t.Fatalf("machine registration with email: %+v", kr)
		}
		m := map[string]any{"label": kr.Label}
		if !machine {
			m["tier"] = kr.Tier
			if kr.Email != "" {
				m["email"], m["email_consent"] = kr.Email, kr.EmailConsent
			}
		}
		again, _ := json.Marshal(m)
		kr2, err := parseKeyRequest(again, machine)
		if err != nil || kr2 != kr {
			t.Fatalf("re-encoded %s: %+v %v (was %+v)", again, kr2, err, kr)
		}
	})
}
