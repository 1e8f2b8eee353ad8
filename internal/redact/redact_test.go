package redact

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

func TestUserInfo(t *testing.T) {
	for _, tc := range []struct {
		raw, head, password, tail string
		ok                        bool
	}{
		{"redis://user:pw@host:6379/0", "redis://user:", "pw", "@host:6379/0", true},
		{"redis://:pw@host", "redis://:", "pw", "@host", true},
		{"rediss://u:p@ss:w@rd@host", "rediss://u:", "p@ss:w@rd", "@host", true},
		{"unix://u:pw@/run/redis.sock?db=1", "unix://u:", "pw", "@/run/redis.sock?db=1", true},
		{"u:pw@host", "u:", "pw", "@host", true}, // no scheme
		{"redis://user@host", "", "", "", false}, // a user name alone
		{"redis://host:6379", "", "", "", false},
		{"", "", "", "", false},
	} {
		head, password, tail, ok := UserInfo(tc.raw)
		if head != tc.head || password != tc.password || tail != tc.tail || ok != tc.ok {
			t.Errorf("UserInfo(%q) = %q, %q, %q, %v; want %q, %q, %q, %v",
				tc.raw, head, password, tail, ok, tc.head, tc.password, tc.tail, tc.ok)
		}
	}
}

func TestURL(t *testing.T) {
	for raw, want := range map[string]string{
		"redis://u:pw@host":                                          "redis://u:xxxxx@host",
		"redis://:p@w@host":                                          "redis://:xxxxx@host",
		"redis://:s3cret@127.0.0.1:6379":                             "redis://:xxxxx@127.0.0.1:6379",
		"redis://user:p@ss:w@host:6379":                              "redis://user:xxxxx@host:6379",
		"redis://host:6379":                                          "redis://host:6379",
		"redis://name@host":                                          "redis://name@host",
		"u:pw@host":                                                  "u:xxxxx@host",
		"unix://u:pw@/tmp/r.sock":                                    "unix://u:xxxxx@/tmp/r.sock",
		"rediss://u:a:b:c@h:1/2?x=y":                                 "rediss://u:xxxxx@h:1/2?x=y",
		"not a url":                                                  "not a url",
		"redis+sentinel://s:1?password=pw&m=":                        "redis+sentinel://s:1?password=xxxxx&m=",
		"redis+sentinel://s:1?master_name=m&password=pw":             "redis+sentinel://s:1?master_name=m&password=xxxxx",
		"redis+sentinel://u:sp@s:1?password=pw&master_name=m":        "redis+sentinel://u:xxxxx@s:1?password=xxxxx&master_name=m",
		"redis+sentinel://s:1?master_name=m&password=a#b&c":          "redis+sentinel://s:1?master_name=m&password=xxxxx",
		"redis+sentinel://s:1?master_name=m&password=a&b&c=1":        "redis+sentinel://s:1?master_name=m&password=xxxxx",
		"redis+sentinel://s:1?master_name=m&sentinel_password=x&y=1": "redis+sentinel://s:1?master_name=m&sentinel_password=xxxxx&y=1",
		"redis+sentinel://s:1?PASSWORD=x":                            "redis+sentinel://s:1?PASSWORD=xxxxx",
		"redis://h:1?client_name=password":                           "redis://h:1?client_name=password",
		"redis://u:p?password=x@h":                                   "redis://u:xxxxx@h",
	} {
		if got := URL(raw); got != want {
			t.Errorf("URL(%q) = %q, want %q", raw, got, want)
		}
	}
}

func TestQueryPasswords(t *testing.T) {
	got := QueryPasswords("redis+sentinel://u:p?x@s:1?password=a#b&sentinel_password=c&db=1&password=")
	want := []string{"a#b", "a", "c"}
	if len(got) != len(want) {
		t.Fatalf("QueryPasswords = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("QueryPasswords = %q, want %q", got, want)
		}
	}
	if got := QueryPasswords("redis://h:1/0"); got != nil {
		t.Errorf("QueryPasswords without a query = %q", got)
	}
}

func TestText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"},
		{"redis://:s3cret@127.0.0.1:6379/0", "redis://:xxxxx@127.0.0.1:6379/0"},
		{"redis://user:s3cret@host:6379", "redis://user:xxxxx@host:6379"},
		{"rediss://user:p@ss/w0rd@host", "rediss://user:xxxxx@host"},
		{"postgres://app:pw@db/x?sslmode=disable", "postgres://app:xxxxx@db/x?sslmode=disable"},
		{`url "redis://:a@h" and "redis://:b@k"`, `url "redis://:xxxxx@h" and "redis://:xxxxx@k"`},
		{"host=db password=hunter2 user=app", "host=db password=xxxxx user=app"},
		{"https://h/x?token=abc&y=1", "https://h/x?token=xxxxx&y=1"},
		{"mailto:someone@example.org", "mailto:someone@example.org"},
		{"redis://user@host", "redis://user@host"},
	} {
		if got := Text(tc.in); got != tc.want {
			t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, secret := range []string{"s3cret", "p@ss/w0rd", "hunter2"} {
		if got := Text("redis://u:" + secret + "@h password=" + secret); got != "redis://u:xxxxx@h password=xxxxx" {
			t.Errorf("secret %q: Text = %q", secret, got)
		}
	}
}

// leakyPasswords are passwords that stop simple rules: quotes, '@', '/',
// spaces.
var leakyPasswords = []string{`Pa'ss1`, `Pa"ss4`, `p@ss/w0rd`, `my pass word`, `a'b"c d@e/f`}

func TestTextIssueExamples(t *testing.T) {
	for _, tc := range []struct{ in, secret string }{
		{`url "redis://:Pa'ss1@127.0.0.1:6379/0" is bad`, `Pa'ss1`},
		{`postgres://agora@db:5432/shop?sslpassword=KeyPass2&password=pw3`, "KeyPass2"},
		{`postgres://agora@db:5432/shop?sslpassword=KeyPass2&password=pw3`, "pw3"},
		{`parse "postgres://agora:Pa\"ss4@db:5432/shop": bad`, `Pa\"ss4`},
		{`parse "redis://127.0.0.1:abc/0?db_password=Leak3": invalid port ":abc" after host`, "Leak3"},
		{`redis+cluster://u:Clu'ster9@h1:7000,h2:7001`, "Clu'ster9"},
		{`redis+sentinel://s:26379?master_name=m&sentinel_password=Sen"ti8&password=Ma'st7`, `Sen"ti8`},
		{`redis+sentinel://s:26379?master_name=m&sentinel_password=Sen"ti8&password=Ma'st7`, `Ma'st7`},
		{`https://h/x?client_secret=Sec1ret&access_token=Tok3n`, "Sec1ret"},
		{`https://h/x?client_secret=Sec1ret&access_token=Tok3n`, "Tok3n"},
		{`host=db password='has space' user=app`, "has space"},
	} {
		got := Text(tc.in)
		if strings.Contains(got, tc.secret) {
			t.Errorf("Text(%q) = %q: shows %q", tc.in, got, tc.secret)
		}
		if !strings.Contains(got, Mask) {
			t.Errorf("Text(%q) = %q: no %s", tc.in, got, Mask)
		}
	}
}

func TestTextQuotedPasswords(t *testing.T) {
	for _, pw := range leakyPasswords {
		for _, url := range []string{
			"redis://:" + pw + "@127.0.0.1:6379/0",
			"postgres://agora:" + pw + "@db:5432/shop",
			"redis+sentinel://u:" + pw + "@s:26379?master_name=m",
			"rediss://h:6380/0?password=" + pw,
		} {
			msg := fmt.Sprintf("connect %q: refused", url)
			got := Text(msg)
			if strings.Contains(got, pw) || strings.Contains(got, strconv.Quote(pw)[1:len(strconv.Quote(pw))-1]) {
				t.Errorf("Text(%q) = %q: shows the password", msg, got)
			}
			if !strings.HasSuffix(got, `": refused`) {
				t.Errorf("Text(%q) = %q: lost the text after the URL", msg, got)
			}
		}
	}
}

func TestKnown(t *testing.T) {
	for _, pw := range leakyPasswords {
		raw := "postgres://agora:" + pw + "@db:5432/shop"
		k := NewKnown(append(Secrets(raw), Secrets("postgres://db/shop?sslpassword="+pw)...))
		// A message that neither quotes the URL nor keeps it whole.
		msg := "cannot use password " + pw + " for agora at db; was " + raw
		got := k.Text(msg)
		if strings.Contains(got, pw) {
			t.Errorf("Known.Text(%q) = %q: shows the password", msg, got)
		}
		if !strings.Contains(got, "for agora at db") {
			t.Errorf("Known.Text(%q) = %q: hid more than the password", msg, got)
		}
	}
	if got := NewKnown([]string{"db"}).Text("host db"); got != "host db" {
		t.Errorf("a short secret is replaced everywhere: %q", got)
	}
	var none *Known
	if got := none.Text("redis://:pw@h"); got != "redis://:xxxxx@h" {
		t.Errorf("nil Known: %q", got)
	}
}

func TestIsSecretParam(t *testing.T) {
	for name, want := range map[string]bool{
		"password": true, "sslpassword": true, "db_password": true, "PASSWORD": true, "client_secret": true,
		"access_token": true, "pwd": true, "passwd": true, "db": false, "sslmode": false, "client_name": false,
	} {
		if got := IsSecretParam(name); got != want {
			t.Errorf("IsSecretParam(%q) = %v, want %v", name, got, want)
		}
	}
}
