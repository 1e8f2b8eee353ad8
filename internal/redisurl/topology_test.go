package redisurl

import (
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
			u, err := Parse(tc.raw)
			if err != nil {
				t.Fatal(err)
			}
			o := u.Cluster
			if u.Topology != Cluster || o == nil || u.Options != nil || u.Failover != nil {
				t.Fatalf("topology %q, options %+v", u.Topology, u)
			}
			if !slices.Equal(o.Addrs, tc.addrs) || !slices.Equal(u.Nodes, tc.addrs) {
				t.Errorf("addrs %v, nodes %v; want %v", o.Addrs, u.Nodes, tc.addrs)
			}
			if o.Username != tc.user || o.Password != tc.pwd || (o.TLSConfig != nil) != tc.tls || o.DialTimeout != tc.dial {
				t.Errorf("user %q password %q tls %v dial %s", o.Username, o.Password, o.TLSConfig != nil, o.DialTimeout)
			}
			if u.Redacted != tc.shown {
				t.Errorf("shown %q, want %q", u.Redacted, tc.shown)
			}
		})
	}
}

func TestParseSentinelURLForms(t *testing.T) {
	u, err := Parse("redis+sentinel://s1:26379?addr=s2:26380&addr=s3:26381&master_name=mymaster")
	if err != nil {
		t.Fatal(err)
	}
	o := u.Failover
	if u.Topology != Sentinel || o == nil || o.MasterName != "mymaster" || o.DB != 0 || o.TLSConfig != nil ||
		!slices.Equal(o.SentinelAddrs, []string{"s1:26379", "s2:26380", "s3:26381"}) || !slices.Equal(u.Nodes, o.SentinelAddrs) {
		t.Fatalf("parsed %+v (nodes %v)", o, u.Nodes)
	}

	// The user part authenticates to the Sentinels, the parameters to the
	// primary, as go-redis's failover URL takes them.
	raw := "rediss+sentinel://sent:s3ntpw@s1:26379/2?master_name=m&username=app&password=m%40sterpw"
	u, err = Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	o = u.Failover
	if o.SentinelUsername != "sent" || o.SentinelPassword != "s3ntpw" || o.Username != "app" || o.Password != "m@sterpw" ||
		o.DB != 2 || o.TLSConfig == nil {
		t.Fatalf("parsed %+v", o)
	}
	if want := "rediss+sentinel://sent:xxxxx@s1:26379/2?master_name=m&username=app&password=xxxxx"; u.Redacted != want {
		t.Fatalf("shown %q, want %q", u.Redacted, want)
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
			u, err := Parse(tc.raw)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(u.Redacted, secret) {
					t.Fatalf("shown %q has the password", u.Redacted)
				}
				return
			}
			if err == nil {
				t.Fatalf("Parse(%q) succeeded", tc.raw)
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
	r := NewRedactor("redis+sentinel://s:1?master_name=m&password=m%40ster%2Bpw")
	msg := r.Redact("auth m@ster+pw failed; m%40ster%2Bpw; redis+sentinel://s:1?master_name=m&password=m%40ster%2Bpw")
	for _, leak := range []string{"m@ster+pw", "m%40ster%2Bpw", "ster+", "ster%"} {
		if strings.Contains(msg, leak) {
			t.Errorf("redacted %q still shows %q", msg, leak)
		}
	}
}
