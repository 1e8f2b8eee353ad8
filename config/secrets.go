package config

import "github.com/agora-etl/agora/internal/redact"

// secretsIn returns the secrets among the document's string values (after
// ${VAR} expansion): the whole value of a key whose name says it is one
// (password, sslpassword, client_secret, token...), and the passwords in
// every URL, so messages hide them by value even where no rule of
// redact.Text can tell where they end.
func secretsIn(v any, key string) []string {
	var out []string
	switch v := v.(type) {
	case string:
		if redact.IsSecretParam(key) && v != "" {
			out = append(out, v)
		}
		out = append(out, redact.Secrets(v)...)
	case map[string]any:
		for k, el := range v {
			out = append(out, secretsIn(el, k)...)
		}
	case []any:
		for _, el := range v {
			out = append(out, secretsIn(el, key)...)
		}
	case []map[string]any:
		for _, el := range v {
			out = append(out, secretsIn(el, key)...)
		}
	}
	return out
}
