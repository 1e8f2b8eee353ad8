// Package redisurl parses the Redis URLs agora takes, one parser for the
// coordinator (AGORA_DISTRIBUTED_REDIS_URL, the Redlock nodes) and the
// components (the redis_stream source and sink, the file source's state):
// one server (redis://, rediss://, unix://), a Redis Cluster
// (redis+cluster://) or a primary found through Sentinels
// (redis+sentinel://). Its messages show URLs with their passwords
// replaced (internal/redact) and never quote a password.
package redisurl

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/internal/redact"
)

// URL is a parsed Redis URL together with the form that may be shown.
// Exactly one of Options, Cluster and Failover is set, by Topology.
type URL struct {
	// Redacted is the URL as written with its passwords replaced: the
	// form logs, errors and status pages show.
	Redacted string
	// Topology says which of the options below is set.
	Topology Topology
	// Options are the go-redis options of one server (Single).
	Options *redis.Options
	// Cluster are the go-redis options of a Redis Cluster (Cluster).
	Cluster *redis.ClusterOptions
	// Failover are the go-redis options of a Sentinel set-up (Sentinel).
	Failover *redis.FailoverOptions
	// Nodes are the addresses the URL names (host:port, no credentials):
	// the server, the cluster seeds or the Sentinels.
	Nodes []string
}

// Parse accepts redis://, rediss:// (TLS) and unix:// URLs with an
// optional user:password@ (ACL user or legacy requirepass) and a /db path or
// ?db= parameter, plus go-redis's query parameters such as dial_timeout;
// and the Redis Cluster and Sentinel forms redis+cluster://,
// rediss+cluster://, redis+sentinel:// and rediss+sentinel:// (see
// parseTopologyURL). Errors start with the redacted URL in quotes (the
// caller adds which setting held it) and never contain the password.
func Parse(raw string) (URL, error) {
	if strings.TrimSpace(raw) == "" {
		return URL{}, errors.New("is empty")
	}
	shown := redact.URL(raw)
	if !strings.Contains(raw, "://") {
		return URL{}, fmt.Errorf("%q has no scheme; write redis://host:6379, rediss://host:6380 (TLS), unix:///path/to/redis.sock, redis+cluster://host:6379 or redis+sentinel://host:26379?master_name=NAME", shown)
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Parse errors quote pieces of the input. When the input has a
		// user part, a piece could be a password, so say less.
		if strings.Contains(raw, "@") {
			return URL{}, fmt.Errorf("%q is not a valid URL (percent-encode special characters such as @ : / # ? & in the password)", shown)
		}
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return URL{}, fmt.Errorf("%q is not a valid URL: %v", shown, err)
	}
	if passwordMisread(raw, u) || queryPasswordMisread(raw) {
		// The password holds an unencoded / ? # or @, so the URL parser took
		// part of it for a path, query, fragment or host: nothing it
		// reports can be shown, and nothing it parsed can be trusted.
		return URL{}, fmt.Errorf("%q is not a valid URL (percent-encode special characters such as @ : / # ? & in the password)", shown)
	}
	if u.Fragment != "" {
		return URL{}, fmt.Errorf("%q has a #fragment; percent-encode # in a password as %%23", shown)
	}
	if base, topo, ok := topologyScheme(u.Scheme); ok {
		return parseTopologyURL(raw, u, shown, base, topo)
	}
	switch u.Scheme {
	case "redis", "rediss":
		if err := checkTCPURL(u); err != nil {
			return URL{}, fmt.Errorf("%q: %w", shown, err)
		}
	case "unix":
		if u.Path == "" {
			return URL{}, fmt.Errorf("%q has no socket path; write unix:///path/to/redis.sock", shown)
		}
		if db := u.Query().Get("db"); db != "" {
			if n, err := strconv.Atoi(db); err != nil || n < 0 {
				return URL{}, fmt.Errorf("%q: database %q is not a number ≥ 0", shown, db)
			}
		}
	default:
		return URL{}, fmt.Errorf("%q: scheme %q is not supported; use redis://, rediss:// (TLS), unix://, redis+cluster:// or redis+sentinel:// (rediss+cluster:// and rediss+sentinel:// for TLS)", shown, u.Scheme)
	}
	opts, err := redis.ParseURL(raw)
	if err != nil {
		r := NewRedactor(raw)
		return URL{}, fmt.Errorf("%q: %s", shown, r.Redact(err.Error()))
	}
	return URL{Redacted: shown, Topology: Single, Options: opts, Nodes: []string{opts.Addr}}, nil
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
