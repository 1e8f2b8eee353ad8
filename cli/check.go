package cli

import (
	"fmt"
	"strings"
)

const checkUsage = `usage: agora check FILE
       agora check --config FILE   (or -c FILE)

Loads and checks an agora/v1 file as agora worker would, without running
anything or connecting to any server: every problem is printed as
file:line:col: message, all at once, and the exit code is 1. A valid file
prints a summary of its pipelines (passwords in URLs redacted) and exits 0;
it warns (on stderr, still exit 0) about what would fail as the environment
stands: a fenced SQL sink with AGORA_DISTRIBUTED_REDIS_URL not set.
`

func check(e *env, args []string) int {
	f, err := splitFlags(args, "config", "c")
	if err != nil {
		return usageError(e, "check", err)
	}
	if f.help {
		fmt.Fprint(e.stdout, checkUsage)
		return ExitOK
	}
	// The file may be named by --config, -c or as the one argument.
	f.values["config"] = append(f.values["config"], f.values["c"]...)
	for _, arg := range f.rest {
		if strings.HasPrefix(arg, "-") {
			return usageError(e, "check", fmt.Errorf("unknown flag %s", arg))
		}
	}
	f.values["config"] = append(f.values["config"], f.rest...)
	path, err := f.one("config")
	if err != nil {
		return usageError(e, "check", fmt.Errorf("one file at a time: %q", f.values["config"]))
	}
	if path == "" {
		return usageError(e, "check", fmt.Errorf("missing FILE (agora check pipelines.toml)"))
	}
	file, ok := loadConfig(e, path)
	if !ok {
		return ExitFailure
	}
	fmt.Fprint(e.stdout, file.Summary())
	// Warnings: valid, but what runs would not work as the environment
	// stands (config.File.Warnings). They do not change the exit code.
	url, _ := e.lookup("AGORA_DISTRIBUTED_REDIS_URL")
	for _, w := range file.Warnings(strings.TrimSpace(url) != "") {
		fmt.Fprintf(e.stderr, "%s:%d:%d: warning: %s\n", w.File, w.Line, w.Col, w.Message)
	}
	fmt.Fprintf(e.stdout, "%s: ok\n", path)
	return ExitOK
}
