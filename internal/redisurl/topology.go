package distributed

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// topology says how the primary Redis is deployed, and so which go-redis
// client reaches it.
type topology string

const (
	// topologySingle is one server: a go-redis Client.
	topologySingle topology = "single"
	// topologyCluster is a Redis Cluster: a go-redis ClusterClient, which
	// sends each command to the master of its key's hash slot.
	topologyCluster topology = "cluster"
	// topologySentinel is a primary found through Sentinels: a go-redis
	// failover Client, which follows the primary when Sentinel fails over.
	topologySentinel topology = "sentinel"
)

// topologyScheme maps a Cluster or Sentinel scheme to the scheme go-redis's
// URL parsers take (redis or rediss) and the topology.
func topologyScheme(scheme string) (base string, topo topology, ok bool) {
	switch scheme {
	case "redis+cluster":
		return "redis", topologyCluster, true
	case "rediss+cluster":
		return "rediss", topologyCluster, true
	case "redis+sentinel":
		return "redis", topologySentinel, true
	case "rediss+sentinel":
		return "rediss", topologySentinel, true
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
func parseTopologyURL(raw string, u *url.URL, shown, base string, topo topology) (redisURL, error) {
	fail := func(format string, args ...any) (redisURL, error) {
		return redisURL{}, fmt.Errorf("%q: "+format, append([]any{shown}, args...)...)
	}
	q := u.Query()
	switch topo {
	case topologyCluster:
		if p := strings.Trim(u.Path, "/"); p != "" && p != "0" {
			return fail("path %q: Redis Cluster has database 0 only; drop the path", u.Path)
		}
		if q.Has("db") {
			return fail("Redis Cluster has database 0 only; drop the db parameter")
		}
		if q.Has("username") || q.Has("password") {
			return fail("put the cluster's credentials in the user part (%s://user:password@host:port), not in parameters", u.Scheme)
		}
	case topologySentinel:
		if strings.TrimSpace(q.Get("master_name")) == "" {
			return fail("has no master_name; add ?master_name=NAME, the name the Sentinels monitor the primary by")
		}
	}
	c := *u
	if topo == topologyCluster {
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
	r := newRedactor(raw, rewritten)
	out := redisURL{redacted: shown, topology: topo}
	switch topo {
	case topologyCluster:
		opts, err := redis.ParseClusterURL(rewritten)
		if err != nil {
			return fail("%s", r.redact(err.Error()))
		}
		out.cluster, out.nodes = opts, append([]string(nil), opts.Addrs...)
	case topologySentinel:
		opts, err := redis.ParseFailoverURL(rewritten)
		if err != nil {
			return fail("%s", r.redact(err.Error()))
		}
		out.failover, out.nodes = opts, append([]string(nil), opts.SentinelAddrs...)
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
