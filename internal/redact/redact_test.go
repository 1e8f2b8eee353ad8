package redact

import "testing"

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
