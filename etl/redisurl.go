package etl

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/internal/redact"
)

// parseRedisURL parses a redis://, rediss:// or unix:// URL with go-redis's
// ParseURL. Errors show the URL with its password replaced and never quote
// the password.
func parseRedisURL(raw string) (*redis.Options, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, errors.New("is empty")
	}
	shown := redact.URL(raw)
	opts, err := redis.ParseURL(raw)
	if err != nil {
		msg := err.Error()
		if _, pw, _, ok := redact.UserInfo(raw); ok && pw != "" {
			msg = strings.ReplaceAll(msg, pw, redact.Mask)
			if dec, derr := url.PathUnescape(pw); derr == nil && dec != "" {
				msg = strings.ReplaceAll(msg, dec, redact.Mask)
			}
		}
		return nil, fmt.Errorf("%q: %s", shown, msg)
	}
	return opts, nil
}
