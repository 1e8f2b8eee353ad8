package cli

import (
	"fmt"
)

const checkUsage = `usage: agora check --config FILE

Loads and checks an agora/v1 file as agora worker would, without running
anything or connecting to any server: every problem is printed as
file:line:col: message, all at once, and the exit code is 1. A valid file
prints a summary of its pipelines (passwords in URLs redacted) and exits 0.
`

func check(e *env, args []string) int {
	f, err := splitFlags(args, "config")
	if err != nil {
		return usageError(e, "check", err)
	}
	if f.help {
		fmt.Fprint(e.stdout, checkUsage)
		return ExitOK
	}
	if len(f.rest) > 0 {
		return usageError(e, "check", fmt.Errorf("unexpected arguments %q", f.rest))
	}
	path, err := f.one("config")
	if err != nil {
		return usageError(e, "check", err)
	}
	if path == "" {
		return usageError(e, "check", fmt.Errorf("missing --config FILE"))
	}
	file, ok := loadConfig(e, path)
	if !ok {
		return ExitFailure
	}
	fmt.Fprint(e.stdout, file.Summary())
	fmt.Fprintf(e.stdout, "%s: ok\n", path)
	return ExitOK
}
