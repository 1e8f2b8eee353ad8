package ui

import (
	"net/http"
	"strings"
	"testing"
)

func TestAnUnchangedPageIsNotModified(t *testing.T) {
	srv, _, _ := newServer(t, "")
	for _, path := range []string{"/", "/pipelines/orders", "/runs?outcome=failed"} {
		code, body, resp := get(t, srv.Client(), srv.URL+path)
		tag := resp.Header.Get("ETag")
		if code != 200 || len(tag) != 18 || !strings.Contains(body, `<meta name="agora-etag" content="`+strings.Trim(tag, `"`)+`">`) {
			t.Fatalf("GET %s = %d, ETag %q, and the page does not carry it", path, code, tag)
		}
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		req.Header.Set("If-None-Match", tag)
		resp2, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp2.Body.Close()
		if resp2.StatusCode != http.StatusNotModified {
			t.Errorf("GET %s with its ETag = %d, want 304", path, resp2.StatusCode)
		}
		req.Header.Set("If-None-Match", `"0123456789abcdef"`)
		resp3, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp3.Body.Close()
		if resp3.StatusCode != 200 {
			t.Errorf("GET %s with another ETag = %d, want 200", path, resp3.StatusCode)
		}
	}
}
