package distributed

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// redisURL is a parsed Redis URL together with the form that may be shown.
type redisURL struct {
	redacted string
	opts     *redis.Options
}

// redactedPassword replaces passwords wherever agora prints a URL.
const redactedPassword = "xxxxx"

// parseRedisURL accepts redis://, rediss:// (TLS) and unix:// URLs with an
// optional user:password@ (ACL user or legacy requirepass) and a /db path or
// ?db= parameter, plus go-redis's query parameters such as dial_timeout.
// Errors never contain the password.
func parseRedisURL(raw string) (redisURL, error) {
	if strings.TrimSpace(raw) == "" {
		return redisURL{}, errors.New("is empty")
	}
	shown := redactRawURL(raw)
	if !strings.Contains(raw, "://") {
		return redisURL{}, fmt.Errorf("%q has no scheme; write redis://host:6379, rediss://host:6380 (TLS) or unix:///path/to/redis.sock", shown)
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Parse errors quote pieces of the input. When the input has a
		// user part, a piece could be a password, so say less.
		if strings.Contains(raw, "@") {
			return redisURL{}, fmt.Errorf("%q is not a valid URL (percent-encode special characters such as @ : / # ? in the password)", shown)
		}
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return redisURL{}, fmt.Errorf("%q is not a valid URL: %v", shown, err)
	}
	shown = u.Redacted()
	if u.Fragment != "" {
		return redisURL{}, fmt.Errorf("%q has a #fragment; percent-encode # in a password as %%23", shown)
	}
	switch u.Scheme {
	case "redis", "rediss":
		if err := checkTCPURL(u); err != nil {
			return redisURL{}, fmt.Errorf("%q: %w", shown, err)
		}
	case "unix":
		if u.Path == "" {
			return redisURL{}, fmt.Errorf("%q has no socket path; write unix:///path/to/redis.sock", shown)
		}
		if db := u.Query().Get("db"); db != "" {
			if n, err := strconv.Atoi(db); err != nil || n < 0 {
				return redisURL{}, fmt.Errorf("%q: database %q is not a number ≥ 0", shown, db)
			}
		}
	default:
		return redisURL{}, fmt.Errorf("%q: scheme %q is not supported; use redis://, rediss:// (TLS) or unix://", shown, u.Scheme)
	}
	opts, err := redis.ParseURL(raw)
	if err != nil {
		r := newRedactor(raw)
		return redisURL{}, fmt.Errorf("%q: %s", shown, r.redact(err.Error()))
	}
	return redisURL{redacted: shown, opts: opts}, nil
}

func checkTCPURL(u *url.URL) error {
	if u.Opaque != "" {
		return errors.New("has no host; write redis://host:6379")
	}
	if u.Hostname() == "" {
		return errors.New("has no host; write redis://host:6379")
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("port %q is not between 1 and 65535", p)
		}
	}
	path := strings.Trim(u.Path, "/")
	if path != "" {
		if strings.Contains(path, "/") {
			return fmt.Errorf("path %q is not a database number; write /0 to /15", u.Path)
		}
		if n, err := strconv.Atoi(path); err != nil || n < 0 {
			return fmt.Errorf("database %q is not a number ≥ 0", path)
		}
	}
	return nil
}

// redactRawURL hides the password of a URL that may not parse: everything
// between the first ':' of the user part and the last '@' is replaced.
func redactRawURL(raw string) string {
	rest := raw
	scheme := ""
	if i := strings.Index(raw, "://"); i >= 0 {
		scheme, rest = raw[:i+3], raw[i+3:]
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return raw
	}
	user := rest[:at]
	colon := strings.Index(user, ":")
	if colon < 0 {
		// A user name alone is not a secret.
		return raw
	}
	return scheme + user[:colon+1] + redactedPassword + rest[at:]
}

// redactor removes secrets (passwords, whole URLs) from text that leaves the
// package: error messages, log lines, status values.
type redactor struct {
	pairs []string // old, new, old, new ... for strings.NewReplacer
	rep   *strings.Replacer
}

// newRedactor returns a redactor for the given raw URLs.
func newRedactor(raws ...string) *redactor {
	r := &redactor{}
	for _, raw := range raws {
		if raw == "" {
			continue
		}
		shown := redactRawURL(raw)
		if shown != raw {
			r.pairs = append(r.pairs, raw, shown)
		}
		for _, secret := range urlSecrets(raw) {
			r.pairs = append(r.pairs, secret, redactedPassword)
		}
	}
	// Longer secrets first, so a password that contains another is removed
	// whole.
	sortPairsByLength(r.pairs)
	r.rep = strings.NewReplacer(r.pairs...)
	return r
}

// urlSecrets returns the password of raw in every spelling that could show
// up in a message: as written, percent-decoded, and re-encoded.
func urlSecrets(raw string) []string {
	var out []string
	add := func(s string) {
		if s == "" || s == redactedPassword {
			return
		}
		for _, have := range out {
			if have == s {
				return
			}
		}
		out = append(out, s)
	}
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		if p, ok := u.User.Password(); ok {
			add(p)
			add(url.QueryEscape(p))
			add(url.PathEscape(p))
		}
	}
	// Also the raw text between the first ':' and the last '@', for URLs
	// that do not parse.
	rest := raw
	if i := strings.Index(raw, "://"); i >= 0 {
		rest = raw[i+3:]
	}
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		user := rest[:at]
		if colon := strings.Index(user, ":"); colon >= 0 {
			add(user[colon+1:])
		}
	}
	return out
}

func sortPairsByLength(pairs []string) {
	n := len(pairs) / 2
	for i := 1; i < n; i++ {
		for j := i; j > 0 && len(pairs[2*j]) > len(pairs[2*(j-1)]); j-- {
			pairs[2*j], pairs[2*(j-1)] = pairs[2*(j-1)], pairs[2*j]
			pairs[2*j+1], pairs[2*(j-1)+1] = pairs[2*(j-1)+1], pairs[2*j+1]
		}
	}
}

// redact removes every secret from s.
func (r *redactor) redact(s string) string {
	if r == nil || len(r.pairs) == 0 {
		return s
	}
	return r.rep.Replace(s)
}

// wrap returns err with secrets removed from its message; errors.Is and
// errors.As still see the original chain.
func (r *redactor) wrap(err error) error {
	if err == nil || r == nil || len(r.pairs) == 0 {
		return err
	}
	msg := err.Error()
	clean := r.redact(msg)
	if clean == msg {
		return err
	}
	return &redactedError{err: err, msg: clean}
}

type redactedError struct {
	err error
	msg string
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
