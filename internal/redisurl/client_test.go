package redisurl

import (
	"testing"

	"github.com/redis/go-redis/v9"
)

func TestNewClientFollowsTheTopology(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want func(redis.UniversalClient) bool
	}{
		{"redis://:pw@127.0.0.1:6390/3", func(c redis.UniversalClient) bool {
			cl, ok := c.(*redis.Client)
			return ok && cl.Options().Addr == "127.0.0.1:6390" && cl.Options().DB == 3 && cl.Options().Password == "pw"
		}},
		{"redis+cluster://127.0.0.1:7000?addr=127.0.0.1:7001", func(c redis.UniversalClient) bool {
			cl, ok := c.(*redis.ClusterClient)
			return ok && len(cl.Options().Addrs) == 2
		}},
		{"redis+sentinel://127.0.0.1:26379?master_name=m", func(c redis.UniversalClient) bool {
			// A failover client is a *redis.Client whose dialer asks the
			// Sentinels; its address is the master name.
			cl, ok := c.(*redis.Client)
			return ok && cl.Options().Addr == "FailoverClient"
		}},
	} {
		u, err := Parse(tc.raw)
		if err != nil {
			t.Fatal(err)
		}
		c := u.NewClient()
		if !tc.want(c) {
			t.Errorf("%s: client %T with unexpected options", u.Redacted, c)
		}
		_ = c.Close()
	}
}

// TestNewClientCopiesTheOptions: a client's options are its own, so one
// URL can build many clients.
func TestNewClientCopiesTheOptions(t *testing.T) {
	u, err := Parse("redis://127.0.0.1:6390")
	if err != nil {
		t.Fatal(err)
	}
	c := u.NewClient().(*redis.Client)
	defer c.Close()
	if c.Options() == u.Options {
		t.Fatal("client shares the parsed options")
	}
}
