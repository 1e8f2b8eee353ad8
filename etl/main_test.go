package etl_test

import (
	"os"
	"testing"
)

// TestMain lets a test re-execute this binary as a worker process: with
// crashChildEnv set it runs one pipeline (crashChild) instead of the tests.
func TestMain(m *testing.M) {
	if os.Getenv(crashChildEnv) != "" {
		os.Exit(crashChild())
	}
	os.Exit(m.Run())
}
