package ui

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agora-etl/agora/fleet"
	"github.com/agora-etl/agora/runtime"
)

var now = time.Date(2026, 3, 1, 12, 0, 30, 0, time.UTC)

// memBackend is a fleet in memory: two workers, two pipelines.
type memBackend struct {
	mu        sync.Mutex
	paused    map[string]fleet.PauseInfo
	triggered []string
}

func (b *memBackend) Workers(context.Context) ([]fleet.Worker, error) {
	return []fleet.Worker{
		{ID: "w-a", Host: "host-a", Version: "v1.2.3", Pipelines: []string{"orders", "events"},
			Schedules: map[string]string{"orders": `cron="0 * * * *"`, "events": "continuous"},
			StartedAt: now.Add(-time.Hour), LastHeartbeat: now.Add(-2 * time.Second)},
		{ID: "w-b", Host: "host-b", Version: "v1.2.3", Pipelines: []string{"orders", "events"},
			StartedAt: now.Add(-time.Minute), LastHeartbeat: now.Add(-time.Second)},
	}, nil
}

func (b *memBackend) LeaseStates(_ context.Context, ids []string) ([]fleet.LeaseState, error) {
	out := make([]fleet.LeaseState, len(ids))
	for i, id := range ids {
		out[i] = fleet.LeaseState{PipelineID: id, LastToken: 7}
		if id == "events" {
			out[i] = fleet.LeaseState{PipelineID: id, Held: true, Holder: "w-b", FencingToken: 42, RunNumber: 42, ExpiresIn: 20 * time.Second}
		}
	}
	return out, nil
}

func (b *memBackend) Runs(_ context.Context, ids []string, _ int) ([][]runtime.RunRecord, error) {
	out := make([][]runtime.RunRecord, len(ids))
	for i, id := range ids {
		if id == "orders" {
			out[i] = []runtime.RunRecord{
				{PipelineID: "orders", RunNumber: 1772366400, FencingToken: 7, WorkerID: "w-a", Start: now.Add(-time.Minute), End: now.Add(-50 * time.Second),
					Duration: 10 * time.Second, Outcome: runtime.OutcomeFailed, Error: "load: connect redis://app:xxxxx@db:6379: refused <script>"},
				{PipelineID: "orders", RunNumber: 1772362800, FencingToken: 6, WorkerID: "w-b", Start: now.Add(-time.Hour), End: now.Add(-time.Hour + time.Second),
					Duration: time.Second, Outcome: runtime.OutcomeStale, Error: "fencing: stale writer: resource \"t\""},
			}
		}
	}
	return out, nil
}

func (b *memBackend) PausedPipelines(context.Context) (map[string]fleet.PauseInfo, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]fleet.PauseInfo{}
	for k, v := range b.paused {
		out[k] = v
	}
	return out, nil
}

func (b *memBackend) Pause(_ context.Context, id, by string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.paused == nil {
		b.paused = map[string]fleet.PauseInfo{}
	}
	b.paused[id] = fleet.PauseInfo{At: now, By: by}
	return nil
}

func (b *memBackend) Resume(_ context.Context, id string) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, was := b.paused[id]
	delete(b.paused, id)
	return was, nil
}

func (b *memBackend) Trigger(_ context.Context, id string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.triggered = append(b.triggered, id)
	return nil
}

func (b *memBackend) PollInterval() time.Duration { return time.Second }
func (b *memBackend) Close() error                { return nil }

func newServer(t *testing.T, token string) (*httptest.Server, *memBackend, *Handler) {
	t.Helper()
	b := &memBackend{}
	h := NewHandler(b, Options{Token: token, Now: func() time.Time { return now }})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, b, h
}

func get(t *testing.T, c *http.Client, u string) (int, string, *http.Response) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), resp
}

func TestFrontPageListsPipelinesAndWorkers(t *testing.T) {
	srv, _, _ := newServer(t, "")
	code, body, resp := get(t, srv.Client(), srv.URL+"/")
	if code != 200 {
		t.Fatalf("GET / = %d\n%s", code, body)
	}
	for _, want := range []string{
		`href="/pipelines/orders"`, `cron=&#34;0 * * * *&#34;`, "2026-03-01 13:00:00Z", // orders' next slot
		`<span class="outcome failed">failed</span>`, "w-b", // events' holder
		`title="load: connect redis://app:xxxxx@db:6379: refused &lt;script&gt;"`, // the last error, on hover
		"v1.2.3", "1h0m0s", // w-a's uptime
		"read-only: started without a token", // no token
	} {
		if !strings.Contains(body, want) {
			t.Errorf("front page lacks %q", want)
		}
	}
	if !strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'none'") {
		t.Errorf("CSP = %q", resp.Header.Get("Content-Security-Policy"))
	}
	if code, _, _ := get(t, srv.Client(), srv.URL+"/static/style.css"); code != 200 {
		t.Errorf("style.css: %d", code)
	}
}

func TestPipelinePageShowsLeaseHistoryErrorsAndStaleRefusals(t *testing.T) {
	srv, _, _ := newServer(t, "")
	code, body, _ := get(t, srv.Client(), srv.URL+"/pipelines/orders")
	if code != 200 {
		t.Fatalf("GET /pipelines/orders = %d", code)
	}
	for _, want := range []string{
		"load: connect redis://app:xxxxx@db:6379: refused &lt;script&gt;", // escaped, and as redacted
		"fencing: stale writer", `id="stale"`, "1 in the history shown",
		"last issued 7", "w-a", "w-b",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("pipeline page lacks %q", want)
		}
	}
	if strings.Contains(body, "<script>") || strings.Contains(body, `<form`) {
		t.Error("read-only page has a form or an unescaped error")
	}
	_, body, _ = get(t, srv.Client(), srv.URL+"/pipelines/events")
	if !strings.Contains(body, "held by w-b (alive)") || !strings.Contains(body, "42 (in force)") {
		t.Errorf("events' lease not shown:\n%s", body)
	}
	if code, _, _ := get(t, srv.Client(), srv.URL+"/pipelines/nope"); code != 404 {
		t.Errorf("unknown pipeline: %d, want 404", code)
	}
}

func TestReadOnlyRefusesActions(t *testing.T) {
	srv, b, h := newServer(t, "")
	resp, err := srv.Client().PostForm(srv.URL+"/pipelines/orders/pause", url.Values{"csrf": {h.csrf}, "token": {""}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if p, _ := b.PausedPipelines(context.Background()); resp.StatusCode != 403 || len(p) != 0 {
		t.Fatalf("read-only POST: %d, paused %v", resp.StatusCode, p)
	}
}

// post sends an action form with the given csrf field, cookie and token.
func post(t *testing.T, srv *httptest.Server, path, csrfField, cookie, token, origin string) *http.Response {
	t.Helper()
	form := url.Values{"csrf": {csrfField}, "token": {token}}
	req, _ := http.NewRequest("POST", srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if cookie != "" {
		req.AddCookie(&http.Cookie{Name: csrfCookie, Value: cookie})
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	c := *srv.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

func TestActionsNeedTokenAndCSRF(t *testing.T) {
	srv, b, h := newServer(t, "s3cret")
	_, body, resp := get(t, srv.Client(), srv.URL+"/pipelines/orders")
	if !strings.Contains(body, `name="csrf" value="`+h.csrf+`"`) || !strings.Contains(body, `id="pause"`) || strings.Contains(body, "read-only") {
		t.Fatal("the page with a token has no pause form with the CSRF field, or says read-only")
	}
	if strings.Contains(body, "s3cret") {
		t.Fatal("the page shows the token")
	}
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == csrfCookie {
			cookie = c
		}
	}
	if cookie == nil || cookie.Value != h.csrf || cookie.SameSite != http.SameSiteStrictMode || !cookie.HttpOnly {
		t.Fatalf("CSRF cookie = %+v", cookie)
	}
	for _, tc := range []struct {
		name                         string
		field, cookie, token, origin string
	}{
		{"no csrf field", "", h.csrf, "s3cret", ""},
		{"no cookie", h.csrf, "", "s3cret", ""},
		{"wrong csrf", strings.Repeat("0", len(h.csrf)), strings.Repeat("0", len(h.csrf)), "s3cret", ""},
		{"wrong token", h.csrf, h.csrf, "s3cre", ""},
		{"cross origin", h.csrf, h.csrf, "s3cret", "http://evil.example"},
	} {
		if resp := post(t, srv, "/pipelines/orders/pause", tc.field, tc.cookie, tc.token, tc.origin); resp.StatusCode != 403 {
			t.Errorf("%s: %d, want 403", tc.name, resp.StatusCode)
		}
	}
	if p, _ := b.PausedPipelines(context.Background()); len(p) != 0 {
		t.Fatalf("a refused request paused: %v", p)
	}
	resp = post(t, srv, "/pipelines/orders/pause", h.csrf, h.csrf, "s3cret", srv.URL)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/pipelines/orders?done=pause" {
		t.Fatalf("pause: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if p, _ := b.PausedPipelines(context.Background()); p["orders"].By != "fleet ui" {
		t.Fatalf("not paused: %v", p)
	}
	_, body, _ = get(t, srv.Client(), srv.URL+"/pipelines/orders?done=pause")
	if !strings.Contains(body, `id="notice"`) || !strings.Contains(body, `id="resume"`) || !strings.Contains(body, "paused</span> by fleet ui") {
		t.Errorf("after pause the page does not show it paused with a resume button")
	}
	if resp := post(t, srv, "/pipelines/orders/trigger", h.csrf, h.csrf, "s3cret", ""); resp.StatusCode != http.StatusBadGateway || len(b.triggered) != 0 {
		t.Errorf("trigger while paused: %d, triggered %v", resp.StatusCode, b.triggered)
	}
	if resp := post(t, srv, "/pipelines/orders/resume", h.csrf, h.csrf, "s3cret", ""); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("resume: %d", resp.StatusCode)
	}
	if resp := post(t, srv, "/pipelines/orders/trigger", h.csrf, h.csrf, "s3cret", ""); resp.StatusCode != http.StatusSeeOther || len(b.triggered) != 1 {
		t.Errorf("trigger: %d, triggered %v", resp.StatusCode, b.triggered)
	}
	if resp := post(t, srv, "/pipelines/orders/delete", h.csrf, h.csrf, "s3cret", ""); resp.StatusCode != 404 {
		t.Errorf("unknown action: %d", resp.StatusCode)
	}
	if code, _, _ := get(t, srv.Client(), srv.URL+"/pipelines/orders/pause"); code != http.StatusMethodNotAllowed && code != 404 {
		t.Errorf("GET on an action: %d", code)
	}
}

func TestCSRFTokenDiffersPerProcessHandler(t *testing.T) {
	_, _, a := newServer(t, "x")
	_, _, b := newServer(t, "x")
	if a.csrf == b.csrf || len(a.csrf) != 64 {
		t.Errorf("CSRF tokens %q and %q", a.csrf, b.csrf)
	}
}
