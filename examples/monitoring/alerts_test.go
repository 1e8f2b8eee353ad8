package monitoring

import (
	"os"
	"os/exec"
	"regexp"
	"testing"
)

// promtool returns the path of promtool (Debian's prometheus package). A
// test without it is skipped, except under CI=true where it fails.
func promtool(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("promtool not found (%v); CI must have the prometheus package installed", err)
		}
		t.Skipf("promtool not found (%v); skipping outside CI", err)
	}
	return path
}

func TestAlertRulesPassPromtool(t *testing.T) {
	bin := promtool(t)
	for _, args := range [][]string{{"check", "rules", "alerts.yml"}, {"test", "rules", "alerts_test.yml"}} {
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err != nil {
			t.Errorf("promtool %v: %v\n%s", args, err, out)
		}
	}
}

// TestAlertRulesQueryOnlyExportedMetrics keeps the rules on metrics a
// worker serves, and checks every rule has its promtool unit test.
func TestAlertRulesQueryOnlyExportedMetrics(t *testing.T) {
	rules, err := os.ReadFile("alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile("alerts_test.yml")
	if err != nil {
		t.Fatal(err)
	}
	names := exported(t)
	used := regexp.MustCompile(`agora_[a-z_]+`).FindAllString(string(rules), -1)
	if len(used) < 5 {
		t.Fatalf("only %d agora metrics in alerts.yml", len(used))
	}
	for _, m := range used {
		if !names[m] {
			t.Errorf("alerts.yml queries %s, which a worker does not export", m)
		}
	}
	alerts := regexp.MustCompile(`(?m)^\s*- alert: (\S+)`).FindAllStringSubmatch(string(rules), -1)
	if len(alerts) != 6 {
		t.Errorf("%d alerts in alerts.yml, want 6", len(alerts))
	}
	for _, a := range alerts {
		if !regexp.MustCompile(`alertname: ` + a[1] + `\n`).Match(tests) {
			t.Errorf("alert %s has no test in alerts_test.yml", a[1])
		}
	}
}
