package ui

import (
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime/clocktest"
)

// signIn returns a client of srv signed in with token through the login
// form, as a browser is.
func signIn(t *testing.T, srv *httptest.Server, token string) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Transport: srv.Client().Transport}
	code, body, _ := get(t, c, srv.URL+"/login")
	if code != 200 || !strings.Contains(body, `id="login"`) {
		t.Fatalf("GET /login = %d\n%s", code, body)
	}
	csrf := between(body, `name="csrf" value="`, `"`)
	resp, err := c.PostForm(srv.URL+"/login", url.Values{"csrf": {csrf}, "token": {token}, "next": {"/"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Request.URL.Path != "/" {
		t.Fatalf("signing in: %d at %s", resp.StatusCode, resp.Request.URL)
	}
	return c
}

func between(s, start, end string) string {
	_, after, _ := strings.Cut(s, start)
	v, _, _ := strings.Cut(after, end)
	return v
}

func noRedirects(c *http.Client) *http.Client {
	cc := *c
	cc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &cc
}

func TestWithATokenReadingNeedsIt(t *testing.T) {
	srv, _, _ := newServer(t, "s3cret")
	anon := noRedirects(srv.Client())
	for _, path := range []string{"/api/runs", "/api/pipelines", "/api/workers", "/api/leases"} {
		code, body, resp := get(t, anon, srv.URL+path)
		if code != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "Bearer") || strings.Contains(body, "orders") {
			t.Errorf("GET %s without the token = %d %q\n%s", path, code, resp.Header.Get("WWW-Authenticate"), body)
		}
	}
	for _, path := range []string{"/", "/pipelines/orders", "/runs"} {
		code, body, resp := get(t, anon, srv.URL+path)
		if code != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/login?next=") || strings.Contains(body, "w-a") {
			t.Errorf("GET %s without the token = %d to %q", path, code, resp.Header.Get("Location"))
		}
	}
	if code, _, _ := get(t, anon, srv.URL+"/static/style.css"); code != 200 {
		t.Errorf("the stylesheet needs the token: %d", code)
	}
	req, _ := http.NewRequest("GET", srv.URL+"/api/runs", nil)
	req.Header.Set("Authorization", "Bearer s3cret")
	resp, err := anon.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var page map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&page)
	resp.Body.Close()
	if resp.StatusCode != 200 || page["total"] != float64(2) {
		t.Errorf("GET /api/runs with the bearer token = %d %v", resp.StatusCode, page)
	}
	req.Header.Set("Authorization", "Bearer guess")
	resp, err = anon.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("GET /api/runs with a wrong bearer token = %d, want 403", resp.StatusCode)
	}
	c := signIn(t, srv, "s3cret")
	if code, body, _ := get(t, c, srv.URL+"/pipelines/orders"); code != 200 || !strings.Contains(body, `id="runs"`) {
		t.Errorf("signed in, GET /pipelines/orders = %d", code)
	}
	if code, _, _ := get(t, c, srv.URL+"/api/runs"); code != 200 {
		t.Errorf("signed in, GET /api/runs = %d", code)
	}
}

func TestWithoutATokenReadingIsOpenAndLoginIsNot(t *testing.T) {
	srv, _, _ := newServer(t, "")
	if code, _, _ := get(t, srv.Client(), srv.URL+"/api/runs"); code != 200 {
		t.Errorf("GET /api/runs of an open dashboard = %d", code)
	}
	resp, err := srv.Client().PostForm(srv.URL+"/login", url.Values{"token": {"x"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("POST /login without a token configured = %d", resp.StatusCode)
	}
}

func TestAPostWithoutSigningInIsRefused(t *testing.T) {
	srv, f, h := newServer(t, "s3cret")
	form := url.Values{"csrf": {h.csrf}, "token": {"s3cret"}}
	req, _ := http.NewRequest("POST", srv.URL+"/pipelines/orders/pause", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(&http.Cookie{Name: csrfCookie, Value: h.csrf})
	resp, err := noRedirects(srv.Client()).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || len(f.paused(t)) != 0 {
		t.Errorf("POST without a session = %d, paused %v", resp.StatusCode, f.paused(t))
	}
}

func TestLoginGoesOnlyToLocalPaths(t *testing.T) {
	for in, want := range map[string]string{"/pipelines/x?page=2": "/pipelines/x?page=2", "//evil.example/": "/", "https://evil.example": "/", `/\evil`: "/", "": "/"} {
		if got := localPath(in); got != want {
			t.Errorf("localPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAHostNotAllowedIsRefused(t *testing.T) {
	f := newFixture(t)
	h := NewHandler(f.in, Options{AllowedHosts: []string{"fleet.example:8090"}})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	for host, want := range map[string]int{
		"rebind.evil.example:8090": http.StatusMisdirectedRequest,
		"evil.example":             http.StatusMisdirectedRequest,
		"localhost:8090":           200, "127.0.0.1": 200, "[::1]:8090": 200, "FLEET.example": 200, "fleet.example:9": 200,
	} {
		for _, path := range []string{"/api/workers", "/"} {
			req, _ := http.NewRequest("GET", srv.URL+path, nil)
			req.Host = host
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != want {
				t.Errorf("GET %s with Host %q = %d, want %d", path, host, resp.StatusCode, want)
			}
		}
	}
}

func TestWrongTokensAreRateLimitedPerClient(t *testing.T) {
	f := newFixture(t)
	clock := clocktest.NewFake(now)
	h := NewHandler(f.in, Options{Token: "hunter2", Now: clock.Now})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	bearer := func(token string) (int, string) {
		req, _ := http.NewRequest("GET", srv.URL+"/api/workers", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("Retry-After")
	}
	for i := 1; i <= guessFree; i++ {
		if code, _ := bearer("guess"); code != http.StatusForbidden {
			t.Fatalf("wrong token %d: %d, want 403", i, code)
		}
	}
	if code, _ := bearer("guess"); code != http.StatusForbidden {
		t.Fatalf("the first delayed wrong token: %d, want 403", code)
	}
	// Now even the right token waits: it is not compared.
	if code, retry := bearer("hunter2"); code != http.StatusTooManyRequests || retry == "" {
		t.Fatalf("right token during the delay: %d, Retry-After %q; want 429", code, retry)
	}
	clock.Advance(guessBase)
	if code, _ := bearer("hunter2"); code != 200 {
		t.Fatalf("right token after the delay: %d", code)
	}
	// The login form counts too, and 1,000 guesses within a minute are
	// refused after the first few.
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Transport: srv.Client().Transport}
	_, body, _ := get(t, c, srv.URL+"/login")
	csrf := between(body, `name="csrf" value="`, `"`)
	codes, last := map[int]int{}, 0
	for range 1000 {
		resp, err := c.PostForm(srv.URL+"/login", url.Values{"csrf": {csrf}, "token": {"guess"}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		codes[resp.StatusCode]++
		last = resp.StatusCode
		clock.Advance(time.Millisecond)
	}
	// Five free, then 250 ms, 500 ms: the third delay outlasts the second.
	if codes[http.StatusForbidden] != guessFree+3 || last != http.StatusTooManyRequests {
		t.Errorf("1,000 wrong logins in a second: %v, the last %d; want %d compared and the 1,000th delayed", codes, last, guessFree+3)
	}
}
