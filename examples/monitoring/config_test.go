package monitoring

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestScrapeConfigPassesPromtool loads prometheus.yml the way the
// Prometheus users install loads it: Debian's package is built without
// Kubernetes discovery, so the file must not need it.
func TestScrapeConfigPassesPromtool(t *testing.T) {
	bin := promtool(t)
	out, err := exec.Command(bin, "check", "config", "prometheus.yml").CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check config prometheus.yml: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "SUCCESS: 1 rule files found") {
		t.Errorf("promtool did not load alerts.yml through rule_files:\n%s", out)
	}
}

// TestKubernetesScrapeConfigPassesPromtool checks prometheus-kubernetes.yml
// with the promtool at hand. A promtool built without Kubernetes discovery
// (Debian's) may refuse kubernetes_sd_configs and nothing else; the rest of
// the file (relabelling, rule files) is then checked with that block swapped
// for static targets.
func TestKubernetesScrapeConfigPassesPromtool(t *testing.T) {
	bin := promtool(t)
	out, err := exec.Command(bin, "check", "config", "prometheus-kubernetes.yml").CombinedOutput()
	if err == nil {
		return
	}
	if !strings.Contains(string(out), "field kubernetes_sd_configs not found") {
		t.Fatalf("promtool check config prometheus-kubernetes.yml: %v\n%s", err, out)
	}
	raw, err := os.ReadFile("prometheus-kubernetes.yml")
	if err != nil {
		t.Fatal(err)
	}
	sd := regexp.MustCompile(`(?m)^    kubernetes_sd_configs:\n      - role: pod\n`)
	if !sd.Match(raw) {
		t.Fatal("prometheus-kubernetes.yml: no kubernetes_sd_configs block with role: pod")
	}
	swapped := sd.ReplaceAll(raw, []byte("    static_configs:\n      - targets: [\"127.0.0.1:8080\"]\n"))
	dir := t.TempDir()
	alerts, err := os.ReadFile("alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"prometheus.yml": swapped, "alerts.yml": alerts} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err = exec.Command(bin, "check", "config", filepath.Join(dir, "prometheus.yml")).CombinedOutput()
	if err != nil {
		t.Errorf("prometheus-kubernetes.yml without its discovery block: %v\n%s", err, out)
	}
}
