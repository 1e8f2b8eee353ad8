package gen

import (
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// applyDiff applies a unified diff made by UnifiedDiff to old.
func applyDiff(t *testing.T, old, diff string) string {
	t.Helper()
	a := splitLines(old)
	lines := strings.SplitAfter(diff, "\n")
	var out []string
	next := 0 // next line of a to copy
	for i := 2; i < len(lines) && lines[i] != ""; i++ {
		l := lines[i]
		if strings.HasPrefix(l, "@@ ") {
			r := strings.Fields(l)[1][1:]
			start, _ := strconv.Atoi(strings.Split(r, ",")[0])
			if strings.HasSuffix(r, ",0") {
				start++ // an empty range names the line before it
			}
			for next < start-1 {
				out = append(out, a[next])
				next++
			}
			continue
		}
		switch l[0] {
		case ' ':
			out = append(out, a[next])
			next++
		case '-':
			if a[next] != strings.TrimSuffix(l[1:], "\n")+"\n" && a[next] != l[1:] {
				t.Fatalf("diff deletes %q, file has %q", l[1:], a[next])
			}
			next++
		case '+':
			out = append(out, l[1:])
		case '\\':
			last := len(out) - 1
			out[last] = strings.TrimSuffix(out[last], "\n")
		}
	}
	out = append(out, a[next:]...)
	return strings.Join(out, "")
}

func TestUnifiedDiffRoundTrips(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	words := []string{"a\n", "b\n", "c\n", "d\n", "e\n"}
	gen := func() string {
		var b strings.Builder
		for range rng.Intn(30) {
			b.WriteString(words[rng.Intn(len(words))])
		}
		return b.String()
	}
	for i := 0; i < 500; i++ {
		old, new := gen(), gen()
		d := UnifiedDiff("a", "b", []byte(old), []byte(new))
		if old == new {
			if d != "" {
				t.Fatalf("diff of equal inputs: %q", d)
			}
			continue
		}
		if got := applyDiff(t, old, d); got != new {
			t.Fatalf("case %d: applying the diff gives %q, want %q\ndiff:\n%s", i, got, new, d)
		}
	}
}

func TestUnifiedDiffFormat(t *testing.T) {
	old := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n"
	new := "1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n11\n12\nthirteen"
	want := `--- old
+++ new
@@ -2,7 +2,7 @@
 2
 3
 4
-5
+five
 6
 7
 8
@@ -10,3 +10,4 @@
 10
 11
 12
+thirteen
\ No newline at end of file
`
	if got := UnifiedDiff("old", "new", []byte(old), []byte(new)); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestUnifiedDiffMatchesDiffutils compares hunks with diff -u where it is
// installed.
func TestUnifiedDiffMatchesDiffutils(t *testing.T) {
	diffTool, err := exec.LookPath("diff")
	if err != nil {
		t.Skip("diff not installed")
	}
	dir := t.TempDir()
	old := "package p\n\nimport (\n\t\"a\"\n\t\"b\"\n)\n\nconst X = 1\n\nfunc F() {}\n"
	new := "package p\n\nimport (\n\t\"a\"\n\t\"c\"\n)\n\nconst X = 2\n\nfunc F() {}\nfunc G() {}\n"
	os.WriteFile(filepath.Join(dir, "old"), []byte(old), 0o644)
	os.WriteFile(filepath.Join(dir, "new"), []byte(new), 0o644)
	out, _ := exec.Command(diffTool, "-u", filepath.Join(dir, "old"), filepath.Join(dir, "new")).Output()
	wantHunks := string(out[strings.Index(string(out), "@@"):])
	got := UnifiedDiff("old", "new", []byte(old), []byte(new))
	if gotHunks := got[strings.Index(got, "@@"):]; gotHunks != wantHunks {
		t.Fatalf("got:\n%s\ndiff -u:\n%s", gotHunks, wantHunks)
	}
}

func TestUnifiedDiffLargeFallback(t *testing.T) {
	var a, b strings.Builder
	for i := range 5000 {
		a.WriteString(strconv.Itoa(i) + "\n")
		b.WriteString(strconv.Itoa(i*7) + "\n")
	}
	d := UnifiedDiff("a", "b", []byte(a.String()), []byte(b.String()))
	if got := applyDiff(t, a.String(), d); got != b.String() {
		t.Fatal("large diff does not apply")
	}
}
