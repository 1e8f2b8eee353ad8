package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestReportParsesRunsAndFindsDuplicates(t *testing.T) {
	var out bytes.Buffer
	r := newReport(&out)
	lines := []struct {
		replica, line string
		isRun         bool
	}{
		{"replica-1", `{"level":"INFO","msg":"pipeline ran","pipeline":"inventory-sync","run_number":1767225600,"fencing_token":7,"rows":3}`, true},
		{"replica-2", `{"level":"INFO","msg":"pipeline ran","pipeline":"inventory-sync","run_number":1767225605,"fencing_token":8,"rows":1}`, true},
		{"replica-3", `{"level":"INFO","msg":"pool started"}`, true},
		{"replica-3", `{"level":"WARN","msg":"redis unreachable"}`, false},
		{"replica-3", `not json`, false},
	}
	for _, l := range lines {
		if got := r.line(l.replica, []byte(l.line)); got != l.isRun {
			t.Errorf("line(%s) = %v, want %v", l.line, got, l.isRun)
		}
	}
	if !strings.Contains(out.String(), "inventory-sync   2026-01-01 00:00:00Z   replica-1  7\n") {
		t.Fatalf("run line missing:\n%s", out.String())
	}
	if d := r.duplicates(); d != 0 {
		t.Fatalf("duplicates = %d, want 0", d)
	}
	r.line("replica-3", []byte(`{"msg":"pipeline ran","pipeline":"inventory-sync","run_number":1767225605,"fencing_token":9}`))
	if d := r.duplicates(); d != 1 {
		t.Fatalf("duplicates = %d, want 1", d)
	}
	r.summary()
	if !strings.Contains(out.String(), "1 slot ran more than once") {
		t.Fatalf("summary does not report the duplicate:\n%s", out.String())
	}
}

// TestSummaryCountsInWords reads as a person would write it: "1 run",
// "2 runs".
func TestSummaryCountsInWords(t *testing.T) {
	var out bytes.Buffer
	r := newReport(&out)
	r.line("replica-1", []byte(`{"msg":"pipeline ran","pipeline":"schema-migrate","run_number":1795948054963585,"fencing_token":1795948054963585}`))
	r.line("replica-2", []byte(`{"msg":"pipeline ran","pipeline":"inventory-sync","run_number":1767225600,"fencing_token":7}`))
	r.line("replica-3", []byte(`{"msg":"pipeline ran","pipeline":"inventory-sync","run_number":1767225605,"fencing_token":8}`))
	r.summary()
	got := out.String()
	for _, want := range []string{"schema-migrate   1 run    (replica-1 1)", "inventory-sync   2 runs   (replica-2 1, replica-3 1)"} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "1 runs") {
		t.Errorf("summary says \"1 runs\":\n%s", got)
	}
}

// TestHeaderExplainsTheTokens says once what the 16-digit numbers are.
func TestHeaderExplainsTheTokens(t *testing.T) {
	var out bytes.Buffer
	newReport(&out).header()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "microseconds") || !strings.Contains(lines[0], "always increasing") || !strings.HasPrefix(lines[1], "PIPELINE") {
		t.Fatalf("header:\n%s", out.String())
	}
}

func TestSlotNames(t *testing.T) {
	if got := slot(1767225600); got != "2026-01-01 00:00:00Z" {
		t.Errorf("slot(time) = %q", got)
	}
	if got := slot(1795948054963585); got != "(numbered by token)" {
		t.Errorf("slot(token) = %q", got)
	}
}
