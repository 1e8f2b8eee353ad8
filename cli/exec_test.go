package cli_test

import (
	osexec "os/exec"
	"testing"
)

// mustRun runs a command in dir and returns its combined output, failing the
// test when it fails.
func mustRun(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := osexec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %q: %v\n%s", name, args, err, out)
	}
	return string(out)
}
