package ui

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
)

// etagPlaceholder stands where the page's own ETag goes (a meta element
// refresh.js reads), until the page is hashed: an ETag cannot hash
// itself.
const etagPlaceholder = "0000000000000000"

// The header's clock is left out of the hash, so a page whose data did
// not change keeps its ETag and a polling tab gets 304.
const nowStart, nowEnd = `<span class="now">`, `</span>`

// conditional sets the ETag of body, a page rendered with
// etagPlaceholder, and answers 304 Not Modified when the request's
// If-None-Match names it. It returns the body with its ETag filled in.
func conditional(w http.ResponseWriter, r *http.Request, body string) (string, bool) {
	hashed := body
	if i := strings.Index(hashed, nowStart); i >= 0 {
		if j := strings.Index(hashed[i:], nowEnd); j >= 0 {
			hashed = hashed[:i] + hashed[i+j:]
		}
	}
	sum := sha256.Sum256([]byte(hashed))
	tag := hex.EncodeToString(sum[:8])
	w.Header().Set("ETag", `"`+tag+`"`)
	if matches(r.Header.Get("If-None-Match"), tag) {
		w.WriteHeader(http.StatusNotModified)
		return "", true
	}
	return strings.Replace(body, etagPlaceholder, tag, 1), false
}

// matches reports whether an If-None-Match header names tag.
func matches(header, tag string) bool {
	for _, v := range strings.Split(header, ",") {
		v = strings.TrimPrefix(strings.TrimSpace(v), "W/")
		if v == `"`+tag+`"` || v == "*" {
			return true
		}
	}
	return false
}
