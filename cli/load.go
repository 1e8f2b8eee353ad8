package cli

import (
	"errors"
	"fmt"

	"github.com/agora-etl/agora/config"
)

// loadConfig loads and checks an agora/v1 file, printing every problem.
func loadConfig(e *env, path string) (*config.File, bool) {
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
