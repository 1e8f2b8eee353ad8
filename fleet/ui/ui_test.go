package ui

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/internal/redistest"
	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/clocktest"
	"github.com/agora-etl/agora/runtime/distributed"
	"github.com/agora-etl/agora/runtime/history"
)

var now = time.Date(2026, 3, 1, 12, 0, 30, 0, time.UTC)

// fleetFixture is a fleet on a real redis-server, as of now: workers w-a
// (started an hour ago, publishing the schedules) and w-b (a minute ago),
// both running orders (hourly) and events (continuous); w-b holds events'
// lease; orders' history holds a run refused as stale (w-b, an hour ago)
// and a failed one (w-a, 50 s ago).
type fleetFixture struct {
	in *distributed.Inspector
	a  *distributed.RedisWorkerCoordinator // w-a, for its view of the triggers
}

func newFixture(t *testing.T) *fleetFixture {
	t.Helper()
	srv := redistest.Start(t)
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	worker := func(id string, started time.Time) *distributed.RedisWorkerCoordinator {
		c, err := distributed.NewRedisWorkerCoordinator(distributed.Options{RedisURL: srv.URL(), Logger: quiet, Clock: clocktest.NewFake(started)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		if id == "w-a" {
			c.SetSchedules(map[string]string{"orders": `cron="0 * * * *"`, "events": "continuous"})
		}
		if err := c.Start(ctx, id, []string{"orders", "events"}); err != nil {
			t.Fatal(err)
		}
		return c
	}
	a, b := worker("w-a", now.Add(-time.Hour)), worker("w-b", now.Add(-time.Minute))
	finish := func(c *distributed.RedisWorkerCoordinator, run int64, rec history.Record) {
		if ok, err := c.TryAcquireLease(ctx, "orders", runtime.SlotRunUnix(run)); !ok || err != nil {
			t.Fatalf("acquire orders run %d: %v, %v", run, ok, err)
		}
		rec.PipelineID = "orders"
		if err := c.FinishRun(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	finish(b, 1772362800, history.Record{Start: now.Add(-time.Hour), End: now.Add(-time.Hour + time.Second),
		Duration: time.Second, Outcome: history.OutcomeStale, Error: "fencing: stale writer: resource \"t\""})
	finish(a, 1772366400, history.Record{Start: now.Add(-time.Minute), End: now.Add(-50 * time.Second),
		Duration: 10 * time.Second, Outcome: history.OutcomeFailed, Error: "load: connect redis://app:xxxxx@db:6379: refused <script>"})
	if ok, err := b.TryAcquireLease(ctx, "events", runtime.RunNumberAuto); !ok || err != nil {
		t.Fatalf("acquire events: %v, %v", ok, err)
	}
	in, err := distributed.NewInspector(ctx, distributed.Options{RedisURL: srv.URL(), Clock: clocktest.NewFake(now)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Close() })
	return &fleetFixture{in: in, a: a}
}

// paused returns the fleet's pause flags.
func (f *fleetFixture) paused(t *testing.T) map[string]distributed.PauseInfo {
	t.Helper()
	p, err := f.in.Paused(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// triggered returns the pipelines with a run-now request pending.
func (f *fleetFixture) triggered(t *testing.T) map[string]time.Time {
	t.Helper()
	p, err := f.a.PendingTriggers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func newServer(t *testing.T, token string) (*httptest.Server, *fleetFixture, *Handler) {
	t.Helper()
	f := newFixture(t)
	h := NewHandler(f.in, Options{Token: token, Now: func() time.Time { return now }})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, f, h
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
		"(devel)", "2026-03-01 11:00:30Z", // w-a's version and start
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
	srv, f, _ := newServer(t, "")
	leases, err := f.in.Leases(context.Background(), "orders", "events")
	if err != nil {
		t.Fatal(err)
	}
	orders, events := leases[0], leases[1]
	if orders.Held || orders.LastToken <= 0 || !events.Held || events.Holder != "w-b" || !events.HolderAlive {
		t.Fatalf("fixture's leases: %+v", leases)
	}
	code, body, _ := get(t, srv.Client(), srv.URL+"/pipelines/orders")
	if code != 200 {
		t.Fatalf("GET /pipelines/orders = %d", code)
	}
	for _, want := range []string{
		"load: connect redis://app:xxxxx@db:6379: refused &lt;script&gt;", // escaped, and as redacted
		"fencing: stale writer", `id="stale"`, "1 in the history kept (2 runs)", `id="duration-chart"`, "1–2 of 2 runs",
		fmt.Sprintf("last issued %d", orders.LastToken), "w-a", "w-b",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("pipeline page lacks %q", want)
		}
	}
	if strings.Contains(body, "<script>") || strings.Contains(body, `id="actions"`) {
		t.Error("read-only page has a form or an unescaped error")
	}
	_, body, _ = get(t, srv.Client(), srv.URL+"/pipelines/events")
	if !strings.Contains(body, "held by w-b (alive)") || !strings.Contains(body, fmt.Sprintf("%d (in force)", events.FencingToken)) {
		t.Errorf("events' lease not shown:\n%s", body)
	}
	if code, _, _ := get(t, srv.Client(), srv.URL+"/pipelines/nope"); code != 404 {
		t.Errorf("unknown pipeline: %d, want 404", code)
	}
}

func TestReadOnlyRefusesActions(t *testing.T) {
	srv, f, h := newServer(t, "")
	resp, err := srv.Client().PostForm(srv.URL+"/pipelines/orders/pause", url.Values{"csrf": {h.csrf}, "token": {""}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if p := f.paused(t); resp.StatusCode != 403 || len(p) != 0 {
		t.Fatalf("read-only POST: %d, paused %v", resp.StatusCode, p)
	}
}

// post sends an action form with the given csrf field, cookie and token,
// and the reason field when one is given.
func post(t *testing.T, srv *httptest.Server, h *Handler, path, csrfField, cookie, token, origin string, reason ...string) *http.Response {
	t.Helper()
	form := url.Values{"csrf": {csrfField}, "token": {token}}
	if len(reason) > 0 {
		form.Set("reason", reason[0])
	}
	req, _ := http.NewRequest("POST", srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if cookie != "" {
		req.AddCookie(&http.Cookie{Name: csrfCookie, Value: cookie})
	}
	req.AddCookie(&http.Cookie{Name: sessionCookie, Value: h.session()}) // signed in
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
	srv, f, h := newServer(t, "s3cret")
	_, body, resp := get(t, signIn(t, srv, "s3cret"), srv.URL+"/pipelines/orders")
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
		if resp := post(t, srv, h, "/pipelines/orders/pause", tc.field, tc.cookie, tc.token, tc.origin); resp.StatusCode != 403 {
			t.Errorf("%s: %d, want 403", tc.name, resp.StatusCode)
		}
	}
	if p := f.paused(t); len(p) != 0 {
		t.Fatalf("a refused request paused: %v", p)
	}
	resp = post(t, srv, h, "/pipelines/orders/pause", h.csrf, h.csrf, "s3cret", srv.URL, "disk full")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/pipelines/orders?done=pause" {
		t.Fatalf("pause: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	// The dashboard names its caller by address: the test's client is on
	// the loopback.
	const actor = "fleet ui 127.0.0.1"
	if p := f.paused(t); p["orders"].By != actor || p["orders"].Reason != "disk full" || !p["orders"].At.Equal(now) {
		t.Fatalf("not paused: %v", p)
	}
	_, body, _ = get(t, signIn(t, srv, "s3cret"), srv.URL+"/pipelines/orders?done=pause")
	if !strings.Contains(body, `id="notice"`) || !strings.Contains(body, `id="resume"`) || !strings.Contains(body, "paused</span> by "+actor) ||
		!strings.Contains(body, ": disk full") {
		t.Errorf("after pause the page does not show it paused with a resume button")
	}
	if resp := post(t, srv, h, "/pipelines/orders/trigger", h.csrf, h.csrf, "s3cret", ""); resp.StatusCode != http.StatusConflict || len(f.triggered(t)) != 0 {
		t.Errorf("trigger while paused: %d, triggered %v", resp.StatusCode, f.triggered(t))
	}
	if resp := post(t, srv, h, "/pipelines/orders/resume", h.csrf, h.csrf, "s3cret", ""); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("resume: %d", resp.StatusCode)
	}
	if resp := post(t, srv, h, "/pipelines/orders/trigger", h.csrf, h.csrf, "s3cret", ""); resp.StatusCode != http.StatusSeeOther || len(f.triggered(t)) != 1 {
		t.Errorf("trigger: %d, triggered %v", resp.StatusCode, f.triggered(t))
	}
	entries, err := h.in.Audit(context.Background(), distributed.AuditQuery{PipelineIDs: []string{"orders"}})
	actions := map[distributed.AuditAction]string{}
	for _, e := range entries {
		if e.Actor != actor {
			t.Errorf("audit entry %+v: actor is not %q", e, actor)
		}
		actions[e.Action] = e.Reason
	}
	if err != nil || len(entries) != 3 || actions[distributed.AuditPause] != "disk full" {
		t.Errorf("audit log after pause, resume, trigger = %+v, %v", entries, err)
	}
	if code, body, _ := get(t, signIn(t, srv, "s3cret"), srv.URL+"/audit?pipeline=orders"); code != 200 ||
		strings.Count(body, `<tr class="audit `) != 3 || !strings.Contains(body, "disk full") || !strings.Contains(body, actor) {
		t.Errorf("/audit: %d\n%s", code, body)
	}
	if code, body, _ := get(t, signIn(t, srv, "s3cret"), srv.URL+"/audit?pipeline=nope"); code != 200 || !strings.Contains(body, "No entry for this pipeline.") {
		t.Errorf("/audit of a pipeline without entries: %d\n%s", code, body)
	}
	if code, body, _ := get(t, signIn(t, srv, "s3cret"), srv.URL+"/api/audit?limit=1"); code != 200 || strings.Count(body, `"action"`) != 1 || !strings.Contains(body, `"actor": "`+actor+`"`) {
		t.Errorf("/api/audit?limit=1: %d %s", code, body)
	}
	if resp := post(t, srv, h, "/pipelines/orders/trigger", h.csrf, h.csrf, "s3cret", "", strings.Repeat("x", distributed.MaxReasonBytes+1)); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("trigger with a reason over MaxReasonBytes: %d, want 400", resp.StatusCode)
	}
	if resp := post(t, srv, h, "/pipelines/nope/pause", h.csrf, h.csrf, "s3cret", ""); resp.StatusCode != http.StatusConflict {
		t.Errorf("pause of a pipeline no worker runs: %d, want 409", resp.StatusCode)
	}
	if resp := post(t, srv, h, "/pipelines/orders/delete", h.csrf, h.csrf, "s3cret", ""); resp.StatusCode != 404 {
		t.Errorf("unknown action: %d", resp.StatusCode)
	}
	if code, _, _ := get(t, signIn(t, srv, "s3cret"), srv.URL+"/pipelines/orders/pause"); code != http.StatusMethodNotAllowed && code != 404 {
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

// TestPipelinePageShowsTheLastMissedDeadline: a slot the fleet reported
// as missing its deadline is on the pipeline's page and in its row of the
// front page; a pipeline with none has no such line and a dash.
func TestPipelinePageShowsTheLastMissedDeadline(t *testing.T) {
	srv, f, _ := newServer(t, "")
	const slot = 1772366400 // 2026-03-01T12:00:00Z, orders' failed run
	if ok, err := f.a.MissedDeadline(context.Background(), "orders", slot); !ok || err != nil {
		t.Fatalf("MissedDeadline(orders) = %v, %v; want reported", ok, err)
	}
	code, body, _ := get(t, srv.Client(), srv.URL+"/pipelines/orders")
	if code != 200 || !strings.Contains(body, `<dt>last deadline missed</dt><dd id="deadline-missed">2026-03-01 12:00:00Z</dd>`) {
		t.Errorf("GET /pipelines/orders = %d; want the missed deadline shown:\n%s", code, body)
	}
	if _, body, _ = get(t, srv.Client(), srv.URL+"/pipelines/events"); strings.Contains(body, "deadline") {
		t.Errorf("events' page mentions a deadline; it has none:\n%s", body)
	}
	_, body, _ = get(t, srv.Client(), srv.URL+"/")
	for id, want := range map[string]string{"orders": "2026-03-01 12:00:00Z", "events": "-"} {
		row := regexp.MustCompile(`(?s)<tr data-pipeline="` + id + `">.*?</tr>`).FindString(body)
		if !strings.Contains(row, `<td class="deadline-missed">`+want+`</td>`) {
			t.Errorf("front page row of %s lacks deadline missed %q:\n%s", id, want, row)
		}
	}
}
