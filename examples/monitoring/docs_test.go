package monitoring

import (
	"os"
	"strings"
	"testing"
)

// freeLabels take values no table can list (ids, names, addresses,
// versions, agora's many Redis operations): the table names the label only.
var freeLabels = map[string]bool{"pipeline": true, "sink": true, "node": true, "version": true, "go_version": true, "op": true}

// TestDocsMetricTableNamesEveryExportedMetric keeps docs/operating.md's
// metric table complete for a worker on Redis with a Redlock quorum: every
// family it serves has a row, the row names each of its labels, and each
// value of a label with a fixed set of values (status, reason, direction,
// outcome).
func TestDocsMetricTableNamesEveryExportedMetric(t *testing.T) {
	raw, err := os.ReadFile("../../docs/operating.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(raw), "\n## Metrics\n")
	if !ok {
		t.Fatal("docs/operating.md has no Metrics section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	rows := map[string]string{}
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		names, _, _ := strings.Cut(line[1:], " | ")
		for _, n := range strings.Split(names, ",") {
			rows[strings.Trim(strings.TrimSpace(n), "`")] = line
		}
	}
	_, labels := scrape(t)
	checked := 0
	for name, byLabel := range labels {
		if strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_") {
			// The Go and process collectors' own families, named as a group.
			if rows["go_*"] == "" || rows["process_*"] == "" {
				t.Errorf("docs/operating.md's metric table does not name go_* and process_*")
			}
			continue
		}
		row, ok := rows[name]
		if !ok {
			t.Errorf("docs/operating.md's metric table has no row for %s", name)
			continue
		}
		for label, values := range byLabel {
			if !strings.Contains(row, "`"+label+"`") {
				t.Errorf("the row of %s does not name its label %s", name, label)
			}
			if freeLabels[label] {
				continue
			}
			for v := range values {
				checked++
				if !strings.Contains(row, "`"+v+"`") {
					t.Errorf("the row of %s does not list %s=%q", name, label, v)
				}
			}
		}
	}
	if checked < 10 || labels["agora_records_total"]["direction"]["filtered"] == false {
		t.Fatalf("only %d fixed label values seen (records' directions %v); the test no longer sees what it checks",
			checked, labels["agora_records_total"]["direction"])
	}
}
