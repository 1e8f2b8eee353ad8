package redact

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// minKnown is the shortest known secret replaced wherever it appears: a
// shorter one ("db", "1") would also hide host names and numbers, so
// those are left to the rules of Text, which find them by position.
const minKnown = 4

// Secrets returns the secrets in value, a setting that may be a URL: the
// password of its user part and the values of its secret query
// parameters, each in every spelling a message could show: as written,
// percent-decoded, percent-encoded and as it looks inside a %q string.
func Secrets(value string) []string {
	var out []string
	add := func(s string) {
		for _, v := range spellings(s) {
			if v != "" && v != Mask && !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	if u, err := url.Parse(value); err == nil && u.User != nil {
		if p, ok := u.User.Password(); ok {
			add(p)
		}
	}
	// Also the text between the first ':' and the last '@', for URLs that
	// do not parse.
	if _, written, _, ok := UserInfo(value); ok {
		add(written)
	}
	for _, p := range QueryPasswords(value) {
		add(p)
	}
	return out
}

// spellings returns s as written, decoded and encoded.
func spellings(s string) []string {
	out := []string{s, url.QueryEscape(s), url.PathEscape(s)}
	if d, err := url.QueryUnescape(s); err == nil {
		out = append(out, d)
	}
	if d, err := url.PathUnescape(s); err == nil {
		out = append(out, d)
	}
	for _, v := range out[:len(out):len(out)] {
		if q := strconv.Quote(v); q[1:len(q)-1] != v {
			out = append(out, q[1:len(q)-1])
		}
	}
	return out
}

// Known hides secrets known by value (the passwords of a config file's
// URLs, the values of its password settings) as well as by Text's rules,
// so a password that no rule can delimit (one with a space, in a message
// that does not quote it) is hidden too. The nil *Known applies Text's
// rules only.
type Known struct {
	rep *strings.Replacer
}

// NewKnown returns a Known for secrets, in each of their spellings;
// those shorter than four bytes are left to Text's rules.
func NewKnown(secrets []string) *Known {
	var long []string
	seen := map[string]bool{}
	for _, secret := range secrets {
		for _, s := range spellings(secret) {
			if len(s) >= minKnown && s != Mask && !seen[s] {
				seen[s] = true
				long = append(long, s)
			}
		}
	}
	if len(long) == 0 {
		return &Known{}
	}
	// Longer first, so a secret that contains another is hidden whole.
	slices.SortStableFunc(long, func(a, b string) int { return len(b) - len(a) })
	args := make([]string, 0, 2*len(long))
	for _, s := range long {
		args = append(args, s, Mask)
	}
	return &Known{rep: strings.NewReplacer(args...)}
}

// Text returns s with the known secrets and whatever Text finds replaced
// by Mask.
func (k *Known) Text(s string) string {
	if k != nil && k.rep != nil {
		s = k.rep.Replace(s)
	}
	return Text(s)
}
