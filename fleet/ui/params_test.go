package ui

import (
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/agora-etl/agora/runtime/distributed"
)

func TestFormParams(t *testing.T) {
	got, err := formParams("day=2026-01-01\r\n\n  \nnote=two words \n")
	if err != nil || !maps.Equal(got, map[string]string{"day": "2026-01-01", "note": "two words "}) {
		t.Fatalf("got %v, %v", got, err)
	}
	if got, err := formParams(" \n"); got != nil || err != nil {
		t.Fatalf("blank: %v, %v", got, err)
	}
	if _, err := formParams("day=1\nday=2"); err == nil || !strings.Contains(err.Error(), `"day=2"`) {
		t.Fatalf("duplicate: %v", err)
	}
}

// postParams posts the trigger form with its params field.
func postParams(t *testing.T, srv *httptest.Server, h *Handler, params string) *http.Response {
	t.Helper()
	return postForm(t, srv, h, "/pipelines/orders/trigger", url.Values{"params": {params}})
}

func TestTriggerFormGivesParams(t *testing.T) {
	srv, f, h := newServer(t, "s3cret")
	if resp := postParams(t, srv, h, "no equals sign"); resp.StatusCode != http.StatusBadRequest || len(f.triggered(t)) != 0 {
		t.Fatalf("bad params: %d, triggered %v", resp.StatusCode, f.triggered(t))
	}
	if resp := postParams(t, srv, h, "day=2026-01-01\n"); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("trigger with params: %d", resp.StatusCode)
	}
	pending, err := f.a.PendingTriggerRequests(context.Background())
	if err != nil || pending["orders"].Params["day"] != "2026-01-01" {
		t.Fatalf("pending = %+v, %v", pending, err)
	}
	if resp := postParams(t, srv, h, "day=2026-01-02"); resp.StatusCode != http.StatusConflict {
		t.Fatalf("other params while one is pending: %d, want 409", resp.StatusCode)
	}
	log, err := h.in.Audit(context.Background(), distributed.AuditQuery{PipelineIDs: []string{"orders"}})
	if err != nil || len(log) != 1 || log[0].Params["day"] != "2026-01-01" {
		t.Fatalf("audit = %+v, %v", log, err)
	}
	if code, body, _ := get(t, signIn(t, srv, "s3cret"), srv.URL+"/audit?pipeline=orders"); code != 200 || !strings.Contains(body, "<td>day=2026-01-01</td>") {
		t.Errorf("/audit: %d\n%s", code, body)
	}
	if code, body, _ := get(t, signIn(t, srv, "s3cret"), srv.URL+"/pipelines/orders"); code != 200 || !strings.Contains(body, `id="params-input"`) {
		t.Errorf("the pipeline page has no params field: %d", code)
	}
}
