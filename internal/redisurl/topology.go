package redisurl

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Topology says how a Redis is deployed, and so which go-redis client
// reaches it.
type Topology string

const (
	// Single is one server: a go-redis Client.
	Single Topology = "single"
	// Cluster is a Redis Cluster: a go-redis ClusterClient, which sends
	// each command to the master of its key's hash slot.
	Cluster Topology = "cluster"
	// Sentinel is a primary found through Sentinels: a go-redis failover
	// Client, which follows the primary when Sentinel fails over.
	Sentinel Topology = "sentinel"
)

// topologyScheme maps a Cluster or Sentinel scheme to the scheme go-redis's
// URL parsers take (redis or rediss) and the topology.
func topologyScheme(scheme string) (base string, topo Topology, ok bool) {
	switch scheme {
	case "redis+cluster":
		return "redis", Cluster, true
	case "rediss+cluster":
		return "rediss", Cluster, true
	case "redis+sentinel":
		return "redis", Sentinel, true
	case "rediss+sentinel":
		return "rediss", Sentinel, true
	}
	return "", "", false
}

// parseTopologyURL parses the Cluster and Sentinel forms with go-redis's own
// parsers (ParseClusterURL, ParseFailoverURL), after checks that name the
// usual mistakes more clearly than they do:
//
//	redis+cluster://[user:password@]host:port[?addr=host2:port2&addr=…]
//	redis+sentinel://[sentinel-user:sentinel-password@]host:port[/db]?master_name=NAME[&addr=host2:port2…][&username=U][&password=P]
//
// In a Cluster URL the credentials are the nodes'. In a Sentinel URL the
// user part authenticates to the Sentinels and the username and password
// parameters to the primary. rediss+… uses TLS for every connection.
func parseTopologyURL(raw string, u *url.URL, shown, base string, topo Topology) (URL, error) {
	fail := func(format string, args ...any) (URL, error) {
		return URL{}, fmt.Errorf("%q: "+format, append([]any{shown}, args...)...)
	}
	q := u.Query()
	switch topo {
	case Cluster:
		if p := strings.Trim(u.Path, "/"); p != "" && p != "0" {
			return fail("path %q: Redis Cluster has database 0 only; drop the path", u.Path)
		}
		if q.Has("db") {
			return fail("Redis Cluster has database 0 only; drop the db parameter")
		}
		if q.Has("username") || q.Has("password") {
			return fail("put the cluster's credentials in the user part (%s://user:password@host:port), not in parameters", u.Scheme)
		}
	case Sentinel:
		if strings.TrimSpace(q.Get("master_name")) == "" {
			return fail("has no master_name; add ?master_name=NAME, the name the Sentinels monitor the primary by")
		}
	}
	c := *u
	if topo == Cluster {
		c.Path = "" // "/" and "/0" are allowed above; checkTCPURL reads paths as databases
	}
	if err := checkTCPURL(&c); err != nil {
		return fail("%v", err)
	}
	for _, a := range q["addr"] {
		if err := checkAddr(a); err != nil {
			return fail("addr %q %v", a, err)
		}
	}
	// go-redis takes redis:// and rediss://; everything after the scheme
	// is passed as written.
	rewritten := base + raw[strings.Index(raw, "://"):]
	r := NewRedactor(raw, rewritten)
	out := URL{Redacted: shown, Topology: topo}
	switch topo {
	case Cluster:
		opts, err := redis.ParseClusterURL(rewritten)
		if err != nil {
			return fail("%s", r.Redact(err.Error()))
		}
		out.Cluster, out.Nodes = opts, append([]string(nil), opts.Addrs...)
	case Sentinel:
		opts, err := redis.ParseFailoverURL(rewritten)
		if err != nil {
			return fail("%s", r.Redact(err.Error()))
		}
		out.Failover, out.Nodes = opts, append([]string(nil), opts.SentinelAddrs...)
	}
	return out, nil
}

// checkAddr checks one addr parameter: host:port with a port in range.
func checkAddr(a string) error {
	host, port, err := net.SplitHostPort(a)
	if err != nil || host == "" || port == "" {
		return errors.New("is not host:port")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("port %q is not between 1 and 65535", port)
	}
	return nil
}
