package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/agora-etl/agora/runtime/distributed"
)

// TestAPIServesTheInspectorsJSON: /api/{what} answers exactly what the
// Inspector returns, encoded as "fleet {what} --json" prints it.
func TestAPIServesTheInspectorsJSON(t *testing.T) {
	srv, f, _ := newServer(t, "")
	ctx := context.Background()
	for _, tc := range []struct {
		path string
		in   func() (any, error)
	}{
		{"/api/workers", func() (any, error) { return f.in.Workers(ctx) }},
		{"/api/pipelines", func() (any, error) {
			o, err := f.in.Summaries(ctx)
			if err != nil {
				return nil, err
			}
			return o.Page(distributed.PipelineFilter{}, 0, DefaultAPILimit)
		}},
		{"/api/pipelines?q=ORD&limit=1", func() (any, error) {
			o, err := f.in.Summaries(ctx)
			if err != nil {
				return nil, err
			}
			return o.Page(distributed.PipelineFilter{Text: "ORD"}, 0, 1)
		}},
		{"/api/runs", func() (any, error) { return f.in.RunPage(ctx, distributed.RunPageQuery{Limit: DefaultAPILimit}) }},
		{"/api/runs?pipeline=orders&limit=1", func() (any, error) {
			return f.in.RunPage(ctx, distributed.RunPageQuery{RunFilter: distributed.RunFilter{PipelineIDs: []string{"orders"}}, Limit: 1})
		}},
		{"/api/runs?failed=1&q=REFUSED", func() (any, error) {
			return f.in.RunPage(ctx, distributed.RunPageQuery{RunFilter: distributed.RunFilter{Failed: true, Text: "REFUSED"}, Limit: DefaultAPILimit})
		}},
		{"/api/leases?pipeline=orders", func() (any, error) { return f.in.Leases(ctx, "orders") }},
	} {
		code, body, resp := get(t, srv.Client(), srv.URL+tc.path)
		if code != 200 || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("GET %s = %d %q\n%s", tc.path, code, resp.Header.Get("Content-Type"), body)
		}
		v, err := tc.in()
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "  ")
		_ = enc.Encode(v)
		// A held lease's expiry moves between two reads.
		expiry := regexp.MustCompile(`"expires_in_ns": [0-9]+`)
		if expiry.ReplaceAllString(body, "E") != expiry.ReplaceAllString(want.String(), "E") {
			t.Errorf("GET %s:\n%s\nthe inspector's:\n%s", tc.path, body, want.String())
		}
	}
	_, body, _ := get(t, srv.Client(), srv.URL+"/api/leases?pipeline=events")
	var ls []map[string]any
	if err := json.Unmarshal([]byte(body), &ls); err != nil || len(ls) != 1 || ls[0]["holder"] != "w-b" || ls[0]["holder_alive"] != true {
		t.Fatalf("events' lease: %v\n%s", err, body)
	}
	if ns, ok := ls[0]["expires_in_ns"].(float64); !ok || ns <= 0 {
		t.Errorf("expires_in_ns = %v, want integer nanoseconds", ls[0]["expires_in_ns"])
	}

	for path, want := range map[string]int{"/api/nope": 404, "/api/leases?pipeline=nope": 404, "/api/runs?limit=x": 400, "/api/runs?limit=-1": 400,
		"/api/runs?limit=0": 400, "/api/runs?limit=501": 400, "/api/pipelines?limit=0": 400, "/api/runs?cursor=bad": 400,
		"/api/runs?outcome=maybe": 400, "/api/runs?from=yesterday": 400, "/api/pipelines?offset=-1": 400} {
		code, body, _ := get(t, srv.Client(), srv.URL+path)
		if code != want || !strings.Contains(body, `"error"`) {
			t.Errorf("GET %s = %d %s, want %d with an error", path, code, body, want)
		}
	}
}

// TestAPIRunsPagesFollowTheCursor: /api/runs?limit=1 gives one run and a
// next cursor; following it gives the other, then no cursor.
func TestAPIRunsPagesFollowTheCursor(t *testing.T) {
	srv, _, _ := newServer(t, "")
	var ends []string
	path := "/api/runs?pipeline=orders&limit=1"
	for range 3 {
		code, body, _ := get(t, srv.Client(), srv.URL+path)
		var page distributed.RunPage
		if err := json.Unmarshal([]byte(body), &page); code != 200 || err != nil {
			t.Fatalf("GET %s = %d %v", path, code, err)
		}
		if page.Total != 2 || len(page.Runs) != 1 {
			t.Fatalf("GET %s: total %d, %d runs", path, page.Total, len(page.Runs))
		}
		ends = append(ends, string(page.Runs[0].Outcome))
		if page.Next == "" {
			break
		}
		path = "/api/runs?pipeline=orders&limit=1&cursor=" + page.Next
	}
	if strings.Join(ends, ",") != "failed,stale" {
		t.Errorf("pages gave %v, want failed then stale", ends)
	}
}
