package distributed

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/internal/redact"
)

// redisURL is a parsed Redis URL together with the form that may be shown.
// Exactly one of opts, cluster and failover is set, by topology.
type redisURL struct {
	redacted string
	topology topology
	opts     *redis.Options         // topologySingle
	cluster  *redis.ClusterOptions  // topologyCluster
	failover *redis.FailoverOptions // topologySentinel
	// nodes are the addresses the URL names (host:port, no credentials):
	// the server, the cluster seeds or the Sentinels.
	nodes []string
}

// parseRedisURL accepts redis://, rediss:// (TLS) and unix:// URLs with an
// optional user:password@ (ACL user or legacy requirepass) and a /db path or
// ?db= parameter, plus go-redis's query parameters such as dial_timeout;
// and the Redis Cluster and Sentinel forms redis+cluster://,
// rediss+cluster://, redis+sentinel:// and rediss+sentinel:// (see
// parseTopologyURL). Errors never contain the password.
func parseRedisURL(raw string) (redisURL, error) {
	if strings.TrimSpace(raw) == "" {
		return redisURL{}, errors.New("is empty")
	}
	shown := redact.URL(raw)
	if !strings.Contains(raw, "://") {
		return redisURL{}, fmt.Errorf("%q has no scheme; write redis://host:6379, rediss://host:6380 (TLS), unix:///path/to/redis.sock, redis+cluster://host:6379 or redis+sentinel://host:26379?master_name=NAME", shown)
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Parse errors quote pieces of the input. When the input has a
		// user part, a piece could be a password, so say less.
		if strings.Contains(raw, "@") {
			return redisURL{}, fmt.Errorf("%q is not a valid URL (percent-encode special characters such as @ : / # ? & in the password)", shown)
		}
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return redisURL{}, fmt.Errorf("%q is not a valid URL: %v", shown, err)
	}
	if passwordMisread(raw, u) || queryPasswordMisread(raw) {
		// The password holds an unencoded / ? # or @, so the URL parser took
		// part of it for a path, query, fragment or host: nothing it
		// reports can be shown, and nothing it parsed can be trusted.
		return redisURL{}, fmt.Errorf("%q is not a valid URL (percent-encode special characters such as @ : / # ? & in the password)", shown)
	}
	if u.Fragment != "" {
		return redisURL{}, fmt.Errorf("%q has a #fragment; percent-encode # in a password as %%23", shown)
	}
	if base, topo, ok := topologyScheme(u.Scheme); ok {
		return parseTopologyURL(raw, u, shown, base, topo)
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
		return redisURL{}, fmt.Errorf("%q: scheme %q is not supported; use redis://, rediss:// (TLS), unix://, redis+cluster:// or redis+sentinel:// (rediss+cluster:// and rediss+sentinel:// for TLS)", shown, u.Scheme)
	}
	opts, err := redis.ParseURL(raw)
	if err != nil {
		r := newRedactor(raw)
		return redisURL{}, fmt.Errorf("%q: %s", shown, r.redact(err.Error()))
	}
	return redisURL{redacted: shown, topology: topologySingle, opts: opts, nodes: []string{opts.Addr}}, nil
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

// passwordMisread reports whether raw, read as text, has a password (the
// text between the first ':' of the user part and the last '@') that u,
// the URL parser's reading, does not have in the same place: then pieces
// of the password sit in u's other fields, where messages would show them.
func passwordMisread(raw string, u *url.URL) bool {
	_, written, _, ok := redact.UserInfo(raw)
	if !ok {
		return false
	}
	parsed, has := "", false
	if u.User != nil {
		parsed, has = u.User.Password()
	}
	decoded, err := url.PathUnescape(written)
	return !has || err != nil || decoded != parsed
}

// redactor removes secrets (passwords, whole URLs) from text that leaves the
// package: error messages, log lines, status values.
type redactor struct {
	rep *strings.Replacer // nil when there is nothing to remove
}

// newRedactor returns a redactor for the given raw URLs.
func newRedactor(raws ...string) *redactor {
	type pair struct{ secret, shown string }
	var pairs []pair
	for _, raw := range raws {
		if raw == "" {
			continue
		}
		if shown := redact.URL(raw); shown != raw {
			pairs = append(pairs, pair{raw, shown})
		}
		for _, secret := range urlSecrets(raw) {
			pairs = append(pairs, pair{secret, redact.Mask})
		}
	}
	if len(pairs) == 0 {
		return &redactor{}
	}
	// Longer secrets first, so a password that contains another is removed
	// whole.
	slices.SortStableFunc(pairs, func(a, b pair) int { return len(b.secret) - len(a.secret) })
	args := make([]string, 0, 2*len(pairs))
	for _, p := range pairs {
		args = append(args, p.secret, p.shown)
	}
	return &redactor{rep: strings.NewReplacer(args...)}
}

// urlSecrets returns the password of raw in every spelling that could show
// up in a message.
func urlSecrets(raw string) []string { return redact.Secrets(raw) }

// redact removes every secret from s.
func (r *redactor) redact(s string) string {
	if r == nil || r.rep == nil {
		return s
	}
	return r.rep.Replace(s)
}

// wrap returns err with secrets removed from its message; errors.Is and
// errors.As still see the original chain.
func (r *redactor) wrap(err error) error {
	if err == nil || r == nil || r.rep == nil {
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
