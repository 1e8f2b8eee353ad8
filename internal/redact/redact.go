// Package redact hides secrets in what agora prints: error messages, log
// lines, /status values and `agora check` summaries. Every package that
// shows a URL or a setting that may carry a password goes through it, so
// one rule decides what counts as a secret:
//
//   - the password of a URL's user part, scheme://user:password@host: the
//     text from the first ':' of the user part to the last '@' of the URL,
//     so that a password with an unencoded '@', ':', '/', '?' or '#' (a
//     common mistake) is hidden whole, even when the URL does not parse;
//   - the value of a query parameter named password or ending in
//     _password (the master password of a Sentinel URL);
//   - in free text, also password=, passwd=, pwd=, secret= and token=
//     values (libpq key/value strings, URL query parameters).
//
// A user name alone (redis://name@host) is shown: go-redis reads it as the
// ACL user name, not as a password.
package redact

import "strings"

// Mask stands for a secret wherever one is hidden.
const Mask = "xxxxx"

// UserInfo splits raw around the password of its user part without
// parsing it, so it works on URLs that do not parse: head is the scheme and
// user name with the ':' ("redis://user:"), password the text up to the
// last '@', tail the rest from that '@'. ok is false without both a '@' and
// a ':' before it.
func UserInfo(raw string) (head, password, tail string, ok bool) {
	rest := raw
	if i := strings.Index(raw, "://"); i >= 0 {
		rest = raw[i+3:]
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return "", "", "", false
	}
	colon := strings.Index(rest[:at], ":")
	if colon < 0 {
		return "", "", "", false
	}
	start := len(raw) - len(rest)
	return raw[:start+colon+1], rest[colon+1 : at], rest[at:], true
}

// URL returns raw with the password of its user part and the values of its
// secret query parameters replaced by Mask, even when raw does not parse.
func URL(raw string) string {
	head, _, tail, ok := UserInfo(raw)
	if !ok {
		return redactQuery(raw)
	}
	return head + Mask + redactQuery(tail)
}
