package cli

import (
	"fmt"
	goruntime "runtime"
	"runtime/debug"
)

const versionUsage = `usage: agora version

Prints the version of agora this binary was built from.
`

// modulePath is agora's module, looked up in the build information when
// agora is a dependency of a custom binary.
const modulePath = "github.com/agora-etl/agora"

func version(e *env, args []string) int {
	if len(args) > 0 {
		return usageError(e, "version", fmt.Errorf("unexpected arguments %q", args))
	}
	fmt.Fprintf(e.stdout, "agora %s (%s)\n", Version(), goruntime.Version())
	return ExitOK
}

// Version returns the version of the agora module in this binary:
// a release tag, a pseudo-version, or "(devel)" for a build from a
// checkout.
func Version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	if info.Main.Path == modulePath {
		return info.Main.Version
	}
	for _, dep := range info.Deps {
		if dep.Path == modulePath {
			if dep.Replace != nil && dep.Replace.Version == "" {
				return "(devel)"
			}
			return dep.Version
		}
	}
	return "(devel)"
}
