package etl

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/redis/go-redis/v9"
)

// redactedPassword stands for a password wherever a Redis URL is shown.
const redactedPassword = "xxxxx"

// parseRedisURL parses a redis://, rediss:// or unix:// URL with go-redis's
// ParseURL. Errors show the URL with its password replaced and never quote
// the password.
func parseRedisURL(raw string) (*redis.Options, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, errors.New("is empty")
	}
	shown := redactURL(raw)
	opts, err := redis.ParseURL(raw)
	if err != nil {
		msg := err.Error()
		if pw := rawPassword(raw); pw != "" {
			msg = strings.ReplaceAll(msg, pw, redactedPassword)
			if dec, derr := url.PathUnescape(pw); derr == nil && dec != "" {
				msg = strings.ReplaceAll(msg, dec, redactedPassword)
			}
		}
		return nil, fmt.Errorf("%q: %s", shown, msg)
	}
	return opts, nil
}

// redactURL returns raw with the password of its user part replaced, even
// when raw does not parse as a URL.
func redactURL(raw string) string {
	head, pw, tail, ok := splitUserInfo(raw)
	if !ok || pw == "" {
		return raw
	}
	return head + redactedPassword + tail
}

// rawPassword returns the password of raw as written ("" for none).
func rawPassword(raw string) string {
	_, pw, _, _ := splitUserInfo(raw)
	return pw
}

// splitUserInfo splits scheme://user:password@rest into "scheme://user:",
// "password" and "@rest". The password runs to the last '@' before the path,
// so an unencoded '@' or ':' inside it is still hidden.
func splitUserInfo(raw string) (head, password, tail string, ok bool) {
	i := strings.Index(raw, "://")
	if i < 0 {
		return "", "", "", false
	}
	rest := raw[i+3:]
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return "", "", "", false
	}
	colon := strings.Index(rest[:at], ":")
	if colon < 0 {
		// A bare user part is a password with legacy requirepass URLs
		// (redis://secret@host), so hide it too.
		return raw[:i+3], rest[:at], rest[at:], true
	}
	start := i + 3
	return raw[:start+colon+1], rest[colon+1 : at], rest[at:], true
}
