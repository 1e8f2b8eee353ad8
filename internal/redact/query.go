package redact

import "strings"

// IsSecretParam reports whether a query parameter's (or a setting's) value
// is a secret: its name contains password, passwd, secret or token
// anywhere (password, sslpassword, db_password, client_secret,
// access_token), or is pwd, in any case.
func IsSecretParam(name string) bool {
	name = strings.ToLower(name)
	for _, w := range []string{"password", "passwd", "secret", "token"} {
		if strings.Contains(name, w) {
			return true
		}
	}
	return name == "pwd"
}

// Query returns the text after the URL's first '?' outside its user part
// (which may hold an unencoded '?' in a password), fragment included, and
// where it starts in raw.
func Query(raw string) (start int, query string, ok bool) {
	from := 0
	if head, password, _, has := UserInfo(raw); has {
		from = len(head) + len(password)
	}
	i := strings.IndexByte(raw[from:], '?')
	if i < 0 {
		return 0, "", false
	}
	start = from + i + 1
	return start, raw[start:], true
}

// QueryPasswords returns the values of raw's secret query parameters as
// written: up to the next '&', and also up to a '#' when there is one.
func QueryPasswords(raw string) []string {
	_, query, ok := Query(raw)
	if !ok {
		return nil
	}
	var out []string
	for _, seg := range strings.Split(query, "&") {
		name, value, has := strings.Cut(seg, "=")
		if !has || !IsSecretParam(name) || value == "" {
			continue
		}
		out = append(out, value)
		if before, _, cut := strings.Cut(value, "#"); cut && before != "" {
			out = append(out, before)
		}
	}
	return out
}

// redactQuery replaces the values of secret query parameters. A value is
// taken to run to the next '&'; one with a '#' (an unencoded '#' in a
// password starts a fragment) or followed by a parameter without '=' (the
// rest of a password with an unencoded '&') to the end, so no piece of it
// remains.
func redactQuery(raw string) string {
	start, query, ok := Query(raw)
	if !ok {
		return raw
	}
	var b strings.Builder
	b.WriteString(raw[:start])
	rest := query
	for {
		seg, after, more := strings.Cut(rest, "&")
		if name, _, has := strings.Cut(seg, "="); has && IsSecretParam(name) {
			b.WriteString(name + "=" + Mask)
			if strings.Contains(seg, "#") || unencodedAmpersand(after, more) {
				return b.String()
			}
		} else {
			b.WriteString(seg)
		}
		if !more {
			return b.String()
		}
		b.WriteByte('&')
		rest = after
	}
}

// unencodedAmpersand reports whether the parameters after a secret one
// include one without '=' before any fragment: the rest of the password.
func unencodedAmpersand(after string, more bool) bool {
	if !more {
		return false
	}
	after, _, _ = strings.Cut(after, "#")
	for _, seg := range strings.Split(after, "&") {
		if seg != "" && !strings.Contains(seg, "=") {
			return true
		}
	}
	return false
}
