package redisurl

import (
	"strings"

	"github.com/agora-etl/agora/internal/redact"
)

// queryPasswordMisread reports whether a secret query parameter is followed
// by a parameter without '=': every go-redis option has a value, so that is
// the rest of a password with an unencoded '&', which messages about
// unknown options would otherwise show. (A Sentinel URL carries the
// master's password as a query parameter, ?password=…, as go-redis's
// failover URL takes it.)
func queryPasswordMisread(raw string) bool {
	_, query, ok := redact.Query(raw)
	if !ok {
		return false
	}
	query, _, _ = strings.Cut(query, "#")
	secret := false
	for _, seg := range strings.Split(query, "&") {
		name, _, has := strings.Cut(seg, "=")
		switch {
		case has && redact.IsSecretParam(name):
			secret = true
		case secret && !has && seg != "":
			return true
		}
	}
	return false
}
