package distributed

import "strings"

// A Sentinel URL carries the master's password as a query parameter
// (?password=…, as go-redis's failover URL takes it), so redaction covers
// query parameters as well as the user part.

// isSecretParam reports whether a query parameter's value is a secret.
func isSecretParam(name string) bool {
	name = strings.ToLower(name)
	return name == "password" || strings.HasSuffix(name, "_password")
}

// rawQuery returns the text after the URL's first '?' outside its user
// part (which may hold an unencoded '?' in a password), fragment included.
func rawQuery(raw string) (start int, query string, ok bool) {
	from := 0
	if head, password, _, has := rawUserInfo(raw); has {
		from = len(head) + len(password)
	}
	i := strings.IndexByte(raw[from:], '?')
	if i < 0 {
		return 0, "", false
	}
	start = from + i + 1
	return start, raw[start:], true
}

// redactQueryPassword replaces the values of secret query parameters. A
// value is taken to run to the next '&'; one with a '#' (an unencoded '#'
// in a password starts a fragment) or followed by a parameter without '='
// (see queryPasswordMisread) to the end, so no piece of it remains.
func redactQueryPassword(raw string) string {
	start, query, ok := rawQuery(raw)
	if !ok {
		return raw
	}
	var b strings.Builder
	b.WriteString(raw[:start])
	rest := query
	for {
		seg, after, more := strings.Cut(rest, "&")
		if name, _, has := strings.Cut(seg, "="); has && isSecretParam(name) {
			b.WriteString(name + "=" + redactedPassword)
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

// queryPasswords returns the values of secret query parameters as written:
// up to the next '&', and up to a '#' when there is one.
func queryPasswords(raw string) []string {
	_, query, ok := rawQuery(raw)
	if !ok {
		return nil
	}
	var out []string
	for _, seg := range strings.Split(query, "&") {
		name, value, has := strings.Cut(seg, "=")
		if !has || !isSecretParam(name) || value == "" {
			continue
		}
		out = append(out, value)
		if before, _, cut := strings.Cut(value, "#"); cut && before != "" {
			out = append(out, before)
		}
	}
	return out
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

// queryPasswordMisread reports whether a secret query parameter is followed
// by a parameter without '=': every go-redis option has a value, so that is
// the rest of a password with an unencoded '&', which messages about
// unknown options would otherwise show.
func queryPasswordMisread(raw string) bool {
	_, query, ok := rawQuery(raw)
	if !ok {
		return false
	}
	query, _, _ = strings.Cut(query, "#")
	secret := false
	for _, seg := range strings.Split(query, "&") {
		name, _, has := strings.Cut(seg, "=")
		switch {
		case has && isSecretParam(name):
			secret = true
		case secret && !has && seg != "":
			return true
		}
	}
	return false
}
