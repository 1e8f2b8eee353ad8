package cli

import (
	"fmt"
	goruntime "runtime"

	"github.com/agora-etl/agora/runtime"
)

const versionUsage = `usage: agora version

Prints the version of agora this binary was built from.
`

func version(e *env, args []string) int {
	if len(args) > 0 {
		return usageError(e, "version", fmt.Errorf("unexpected arguments %q", args))
	}
	fmt.Fprintf(e.stdout, "agora %s (%s)\n", Version(), goruntime.Version())
	return ExitOK
}

// Version returns the version of the agora module in this binary, the
// same string as runtime.Version.
func Version() string { return runtime.Version() }
