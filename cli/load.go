package cli

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"

	"github.com/agora-etl/agora/config"
)

// loadConfig loads and checks an agora/v1 file, printing every problem.
func loadConfig(e *env, path string) (*config.File, bool) {
	if _, set := os.LookupEnv("GOGC"); !set {
		// Checking a file allocates a great deal that dies young (every
		// key's path, position and decoded copy); fewer collections while
		// it lasts make a 10,000-pipeline file load in about two thirds of
		// the time, for a peak about a tenth higher. The process's own
		// setting comes back for what runs after.
		defer debug.SetGCPercent(debug.SetGCPercent(loadGCPercent))
	}
	file, err := config.Load(path, config.WithRegistry(e.registry), config.WithLookupEnv(e.lookup))
	if err == nil {
		return file, true
	}
	var diags config.Diagnostics
	if errors.As(err, &diags) {
		for _, d := range diags {
			fmt.Fprintln(e.stderr, d)
		}
		fmt.Fprintf(e.stderr, "agora: %d %s in %s; nothing started\n", len(diags), plural(len(diags), "problem", "problems"), path)
		return nil, false
	}
	fmt.Fprintf(e.stderr, "agora: %v\n", err)
	return nil, false
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// loadGCPercent is the garbage collector's target while a file loads.
const loadGCPercent = 400
