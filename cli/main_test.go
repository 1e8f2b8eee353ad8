package cli_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// agoraBin is the agora command built once for every test that runs it as
// a user would, in a subprocess.
var agoraBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "agora-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	agoraBin = filepath.Join(dir, "agora")
	build := exec.Command("go", "build", "-o", agoraBin, "github.com/agora-etl/agora/cmd/agora")
	var out bytes.Buffer
	build.Stdout, build.Stderr = &out, &out
	if err := build.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "building agora: %v\n%s", err, out.String())
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
