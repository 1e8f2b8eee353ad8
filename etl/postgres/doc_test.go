package postgres

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestPackageDocNamesTheStagingThreshold keeps the package doc's word on
// when an upsert stages through COPY in step with the code.
func TestPackageDocNamesTheStagingThreshold(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	want := "from " + thousands(stagedMinRows) + " rows on it is COPYed into a temporary staging"
	if text := strings.Join(strings.Fields(strings.ReplaceAll(string(doc), "//", "")), " "); !strings.Contains(text, want) {
		t.Errorf("doc.go does not say %q", want)
	}
}

// thousands writes n with a comma between groups of three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
