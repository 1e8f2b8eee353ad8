package ui

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/agora-etl/agora/runtime/distributed"
)

// postForm posts form, with the CSRF field and cookie and the session, to
// path and returns the response without following a redirect.
func postForm(t *testing.T, srv *httptest.Server, h *Handler, path string, form url.Values) *http.Response {
	t.Helper()
	form.Set("csrf", h.csrf)
	form.Set("token", "s3cret")
	req, _ := http.NewRequest("POST", srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(&http.Cookie{Name: csrfCookie, Value: h.csrf})
	req.AddCookie(&http.Cookie{Name: sessionCookie, Value: h.session()})
	c := *srv.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// TestBackfillFormStartsShowsAndCancels: the pipeline page's backfill
// form starts a backfill of the hourly pipeline (relative and RFC 3339
// times), the page and the front page show its progress, a second one is
// refused while it runs, the cancel button stops it, and both are audited
// with the dashboard's caller.
func TestBackfillFormStartsShowsAndCancels(t *testing.T) {
	srv, f, h := newServer(t, "s3cret")
	for _, c := range []struct {
		form url.Values
		want int
	}{
		{url.Values{"to": {"2026-03-01T12:00:00Z"}}, http.StatusBadRequest},                   // no from
		{url.Values{"from": {"yesterday"}, "to": {"0s"}}, http.StatusBadRequest},              // not a time
		{url.Values{"from": {"-3h"}, "to": {"0s"}, "parallel": {"0"}}, http.StatusBadRequest}, // parallel below 1
		{url.Values{"from": {"-3h"}, "to": {"2h"}}, http.StatusBadRequest},                    // in the future
		{url.Values{"from": {"-3h1m"}, "to": {"2026-03-01T12:00:00Z"}, "parallel": {"2"}, "reason": {"late"}}, http.StatusSeeOther},
		{url.Values{"from": {"-2h"}, "to": {"-1h"}}, http.StatusConflict}, // one is running
	} {
		if resp := postForm(t, srv, h, "/pipelines/orders/backfill", c.form); resp.StatusCode != c.want {
			t.Errorf("backfill %v: %d, want %d", c.form, resp.StatusCode, c.want)
		}
	}
	p, err := f.in.Backfill(context.Background(), "orders")
	if err != nil || p.Total != 3 || p.Request.Parallel != 2 || p.Request.Reason != "late" || !strings.HasPrefix(p.Request.Actor, "fleet ui ") ||
		p.Request.From.Format("15:04:05") != "08:59:30" {
		t.Fatalf("started backfill = %+v, %v", p, err)
	}
	c := signIn(t, srv, "s3cret")
	_, body, _ := get(t, c, srv.URL+"/pipelines/orders")
	if !strings.Contains(body, `id="backfill"`) || !strings.Contains(body, "remaining 3 of 3") || !strings.Contains(body, `id="backfill-cancel"`) {
		t.Fatalf("the pipeline page does not show the running backfill:\n%s", body)
	}
	_, body, _ = get(t, c, srv.URL+"/")
	if !strings.Contains(body, `<td class="backfill">0/3</td>`) {
		t.Fatalf("the front page does not show the backfill's progress:\n%s", body)
	}
	if resp := postForm(t, srv, h, "/pipelines/orders/backfill-cancel", url.Values{"reason": {"wrong range"}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("cancel: %d", resp.StatusCode)
	}
	_, body, _ = get(t, c, srv.URL+"/pipelines/orders")
	if !strings.Contains(body, ">canceled</span>") || !strings.Contains(body, `id="backfill-start"`) {
		t.Fatalf("the pipeline page after the cancel:\n%s", body)
	}
	entries, err := f.in.Audit(context.Background(), distributed.AuditQuery{PipelineIDs: []string{"orders"}})
	if err != nil || len(entries) != 2 || entries[0].Action != distributed.AuditBackfillCancel || entries[0].Reason != "wrong range" ||
		entries[1].Action != distributed.AuditBackfill || !strings.HasPrefix(entries[1].Actor, "fleet ui ") {
		t.Fatalf("audit = %+v, %v", entries, err)
	}
}
