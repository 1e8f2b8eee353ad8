package config

import (
	"strings"

	"github.com/agora-etl/agora/internal/redact"
)

// secretsIn returns the secrets among the document's string values (after
// ${VAR} expansion): the whole value of a key whose name says it is one
// (password, sslpassword, client_secret, token...), and the passwords in
// every URL, so messages hide them by value even where no rule of
// redact.Text can tell where they end. Each secret is listed once, in the
// order first found.
func secretsIn(v any, key string) []string {
	s := secretSet{seen: map[string]bool{}, urls: map[string]bool{}}
	s.walk(v, key)
	return s.out
}

// secretSet gathers secretsIn's secrets. A file with thousands of
// pipelines repeats the same URLs and passwords: each distinct value is
// looked into once.
type secretSet struct {
	out  []string
	seen map[string]bool // secrets in out
	urls map[string]bool // values already given to redact.Secrets
}

func (s *secretSet) add(secret string) {
	if !s.seen[secret] {
		s.seen[secret] = true
		s.out = append(s.out, secret)
	}
}

func (s *secretSet) walk(v any, key string) {
	switch v := v.(type) {
	case string:
		if redact.IsSecretParam(key) && v != "" {
			s.add(v)
		}
		// A password in a URL's user part needs an @, a secret query
		// parameter an =: other strings hold none.
		if !s.urls[v] && strings.ContainsAny(v, "@=") {
			s.urls[v] = true
			for _, secret := range redact.Secrets(v) {
				s.add(secret)
			}
		}
	case map[string]any:
		for k, el := range v {
			s.walk(el, k)
		}
	case []any:
		for _, el := range v {
			s.walk(el, key)
		}
	case []map[string]any:
		for _, el := range v {
			s.walk(el, key)
		}
	}
}
