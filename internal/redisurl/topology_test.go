package distributed

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseClusterURLForms(t *testing.T) {
	for _, tc := range []struct {
		raw, user, pwd, shown string
		addrs                 []string
		tls                   bool
		dial                  time.Duration
	}{
		{
			raw:   "redis+cluster://127.0.0.1:7000?addr=127.0.0.1:7001&addr=127.0.0.1:7002",
			addrs: []string{"127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:7002"},
			shown: "redis+cluster://127.0.0.1:7000?addr=127.0.0.1:7001&addr=127.0.0.1:7002",
		},
		{
			raw:  "rediss+cluster://alice:s3cret@h1:7000/0?addr=h2:7001&dial_timeout=2s",
			user: "alice", pwd: "s3cret", tls: true, dial: 2 * time.Second,
			addrs: []string{"h1:7000", "h2:7001"},
			shown: "rediss+cluster://alice:xxxxx@h1:7000/0?addr=h2:7001&dial_timeout=2s",
		},
		{
			raw: "redis+cluster://:p%40ss@h1", pwd: "p@ss",
			addrs: []string{"h1:6379"}, shown: "redis+cluster://:xxxxx@h1",
		},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			u, err := parseRedisURL(tc.raw)
			if err != nil {
				t.Fatal(err)
			}
			o := u.cluster
			if u.topology != topologyCluster || o == nil || u.opts != nil || u.failover != nil {
				t.Fatalf("topology %q, options %+v", u.topology, u)
			}
			if !slices.Equal(o.Addrs, tc.addrs) || !slices.Equal(u.nodes, tc.addrs) {
				t.Errorf("addrs %v, nodes %v; want %v", o.Addrs, u.nodes, tc.addrs)
			}
			if o.Username != tc.user || o.Password != tc.pwd || (o.TLSConfig != nil) != tc.tls || o.DialTimeout != tc.dial {
				t.Errorf("user %q password %q tls %v dial %s", o.Username, o.Password, o.TLSConfig != nil, o.DialTimeout)
			}
			if u.redacted != tc.shown {
				t.Errorf("shown %q, want %q", u.redacted, tc.shown)
			}
		})
	}
}

func TestParseSentinelURLForms(t *testing.T) {
	u, err := parseRedisURL("redis+sentinel://s1:26379?addr=s2:26380&addr=s3:26381&master_name=mymaster")
	if err != nil {
		t.Fatal(err)
	}
	o := u.failover
	if u.topology != topologySentinel || o == nil || o.MasterName != "mymaster" || o.DB != 0 || o.TLSConfig != nil ||
		!slices.Equal(o.SentinelAddrs, []string{"s1:26379", "s2:26380", "s3:26381"}) || !slices.Equal(u.nodes, o.SentinelAddrs) {
		t.Fatalf("parsed %+v (nodes %v)", o, u.nodes)
	}

	// The user part authenticates to the Sentinels, the parameters to the
	// primary, as go-redis's failover URL takes them.
	raw := "rediss+sentinel://sent:s3ntpw@s1:26379/2?master_name=m&username=app&password=m%40sterpw"
	u, err = parseRedisURL(raw)
	if err != nil {
		t.Fatal(err)
	}
	o = u.failover
	if o.SentinelUsername != "sent" || o.SentinelPassword != "s3ntpw" || o.Username != "app" || o.Password != "m@sterpw" ||
		o.DB != 2 || o.TLSConfig == nil {
		t.Fatalf("parsed %+v", o)
	}
	if want := "rediss+sentinel://sent:xxxxx@s1:26379/2?master_name=m&username=app&password=xxxxx"; u.redacted != want {
		t.Fatalf("shown %q, want %q", u.redacted, want)
	}
}

func TestTopologyURLErrorsNameTheMistakeAndHideThePassword(t *testing.T) {
	const secret = "Sup3rSecretPw"
	for _, tc := range []struct{ raw, want string }{
		{"redis+cluster://u:" + secret + "@h:7000/3", "database 0 only"},
		{"redis+cluster://u:" + secret + "@h:7000?db=1", "database 0 only"},
		{"redis+cluster://h:7000?password=" + secret, "user part"},
		{"redis+cluster://u:" + secret + "@h:7000?addr=h2", `addr "h2" is not host:port`},
		{"redis+cluster://u:" + secret + "@h:7000?addr=h2:99999", "not between 1 and 65535"},
		{"redis+cluster://u:" + secret + "@h:99999", "not between 1 and 65535"},
		{"redis+cluster://u:" + secret + "@/", "has no host"},
		{"redis+cluster://u:" + secret + "@h:7000?bogus=1", "unexpected option: bogus"},
		{"redis+cluster://u:" + secret + "@h:7000?dial_timeout=soon", "invalid dial_timeout"},
		{"redis+sentinel://u:" + secret + "@s1:26379", "has no master_name"},
		{"redis+sentinel://s1:26379?master_name=m&password=" + secret, ""}, // valid: checked below
		{"redis+sentinel://s1:26379/x?master_name=m&password=" + secret, `database "x" is not a number`},
		{"redis+sentinel://s1:26379?master_name=m&password=" + secret + "&bogus=1", "unexpected option: bogus"},
		{"redis+sentinel://s1:26379?master_name=m&password=Sup3r&Secret", "percent-encode"},
		{"redis+sentinel://s1:26379?master_name=m&password=Sup3r#Secret", "#fragment"},
		{"unix+cluster://u:" + secret + "@/tmp/s", `scheme "unix+cluster" is not supported`},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			u, err := parseRedisURL(tc.raw)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(u.redacted, secret) {
					t.Fatalf("shown %q has the password", u.redacted)
				}
				return
			}
			if err == nil {
				t.Fatalf("parseRedisURL(%q) succeeded", tc.raw)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.want) {
				t.Errorf("error %q does not say %q", msg, tc.want)
			}
			for _, piece := range []string{secret, "Sup3r", "Secret"} {
				if strings.Contains(msg, piece) {
					t.Errorf("error %q shows %q of the password", msg, piece)
				}
			}
		})
	}
}

// TestRedactorHidesTheSentinelMasterPassword: the master password of a
// Sentinel URL is a query parameter, removed in every spelling.
func TestRedactorHidesTheSentinelMasterPassword(t *testing.T) {
	r := newRedactor("redis+sentinel://s:1?master_name=m&password=m%40ster%2Bpw")
	msg := r.redact("auth m@ster+pw failed; m%40ster%2Bpw; redis+sentinel://s:1?master_name=m&password=m%40ster%2Bpw")
	for _, leak := range []string{"m@ster+pw", "m%40ster%2Bpw", "ster+", "ster%"} {
		if strings.Contains(msg, leak) {
			t.Errorf("redacted %q still shows %q", msg, leak)
		}
	}
}

func TestQuorumNodesMustBePlainMasters(t *testing.T) {
	err := Options{
		RedisURL: "redis://primary:6379",
		RedlockRedisURLs: []string{
			"redis://r1:6379", "redis+cluster://:Sup3r@c1:7000?addr=c2:7001", "redis+sentinel://s1:26379?master_name=m&password=Sup3r",
		},
	}.Validate()
	if err == nil {
		t.Fatal("Cluster and Sentinel URLs accepted as quorum nodes")
	}
	msg := err.Error()
	for _, want := range []string{"RedlockRedisURLs[1]", "names a Redis cluster", "RedlockRedisURLs[2]", "names a Redis sentinel", "independent master"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "Sup3r") {
		t.Errorf("error %q shows a password", msg)
	}
}

func TestLoadConfigNamesTheVariableForABadClusterOrSentinelURL(t *testing.T) {
	t.Setenv(envNames.RedisURL, "redis+sentinel://:Sup3rSecret@s1:26379?addr=s2")
	_, err := LoadConfig()
	if err == nil {
		t.Fatal("LoadConfig accepted the URL")
	}
	msg := err.Error()
	if !strings.Contains(msg, envNames.RedisURL+": ") || !strings.Contains(msg, "has no master_name") || strings.Contains(msg, "Sup3r") {
		t.Fatalf("error %q", msg)
	}

	t.Setenv(envNames.RedisURL, "redis+sentinel://s1:26379?master_name=m&password=Sup3rSecret")
	cfg, err := LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	if s := cfg.String(); strings.Contains(s, "Sup3r") || !strings.Contains(s, "password=xxxxx") {
		t.Fatalf("String() = %q", s)
	}
}

func TestStatusShowsTopologyAndNodesWithoutCredentials(t *testing.T) {
	for _, tc := range []struct {
		raw, topology, master string
		nodes                 []string
	}{
		{"redis://:Sup3r@127.0.0.1:6390/0", "single", "", []string{"127.0.0.1:6390"}},
		{"redis+cluster://u:Sup3r@127.0.0.1:7000?addr=127.0.0.1:7001", "cluster", "", []string{"127.0.0.1:7000", "127.0.0.1:7001"}},
		{"redis+sentinel://u:Sup3r@127.0.0.1:26379?addr=127.0.0.1:26380&master_name=mymaster&password=Sup3r2", "sentinel", "mymaster", []string{"127.0.0.1:26379", "127.0.0.1:26380"}},
	} {
		c, err := NewRedisWorkerCoordinator(Options{RedisURL: tc.raw})
		if err != nil {
			t.Fatal(err)
		}
		st := c.Status().(CoordinatorStatus)
		_ = c.Close()
		if st.Topology != tc.topology || st.MasterName != tc.master || !slices.Equal(st.Nodes, tc.nodes) {
			t.Errorf("%s: topology %q master %q nodes %v", tc.raw, st.Topology, st.MasterName, st.Nodes)
		}
		raw, _ := json.Marshal(st)
		if strings.Contains(string(raw), "Sup3r") || !strings.Contains(string(raw), `"topology":"`+tc.topology+`"`) {
			t.Errorf("%s: status %s", tc.raw, raw)
		}
	}
}
