package cli_test

import (
	"strings"
	"testing"
)

// TestWorkerHelpListsTheWorkerFlags: `agora help worker` and `agora
// worker -h` end with the worker flags, and list no subcommand of a
// generated binary nor an empty pipeline list.
func TestWorkerHelpListsTheWorkerFlags(t *testing.T) {
	dir := t.TempDir()
	code, helpOut, stderr := runAgora(t, dir, nil, "help", "worker")
	if code != 0 {
		t.Fatalf("agora help worker: exit %d\n%s", code, stderr)
	}
	code, _, dashH := runAgora(t, dir, nil, "worker", "-h")
	if code != 0 {
		t.Fatalf("agora worker -h: exit %d\n%s", code, dashH)
	}
	for name, out := range map[string]string{"agora help worker": helpOut, "agora worker -h": dashH} {
		_, flags, ok := strings.Cut(out, "Worker flags, the same as every generated worker binary's:\n")
		if !ok {
			t.Fatalf("%s lacks the worker flags heading:\n%s", name, out)
		}
		for _, want := range []string{"-health-port", "-health-addr", "-log-format", "-log-level", "AGORA_DISTRIBUTED_REDIS_URL"} {
			if !strings.Contains(flags, want) {
				t.Errorf("%s: the worker flags lack %s:\n%s", name, want, flags)
			}
		}
		for _, not := range []string{"Commands:", "Pipelines:", "(none: no worker)", "usage: agora [flags]"} {
			if strings.Contains(out, not) {
				t.Errorf("%s shows %q:\n%s", name, not, out)
			}
		}
	}
}
