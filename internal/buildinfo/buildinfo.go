// Package buildinfo works out, once, the version of agora a binary was built
// from. `agora version`, a worker binary's `version` subcommand, the worker
// record in Redis and the agora_build_info metric all print this one
// string, so they cannot disagree.
package buildinfo

import (
	"runtime/debug"
	"strings"
	"sync"
)

// ModulePath is agora's module path, looked up in the build information.
const ModulePath = "github.com/agora-etl/agora"

// Version returns the version of the agora module in this binary:
//
//   - agora is a dependency (a generated worker, a custom agora command):
//     the version go.mod requires, or the replacement's version when the
//     module is replaced by another version; "(devel)" when it is replaced
//     by a directory;
//   - agora is the main module (the agora command built from a checkout,
//     agora's own tests): the main module's version, which Go derives from
//     the VCS tag or a pseudo-version, else "(devel)" followed by the
//     revision ("(devel)-0c0f820abcde"), and "+dirty" for uncommitted
//     changes, when the build recorded them and the version does not
//     already say so;
//   - no build information (a binary built without module support):
//     "(unknown)".
//
// The revision is only added when agora is the main module: the VCS
// settings of a build describe the main module, which is not agora when
// agora is a dependency.
func Version() string { return version() }

var version = sync.OnceValue(func() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	return fromBuildInfo(bi)
})

// fromBuildInfo is Version for the build information bi.
func fromBuildInfo(bi *debug.BuildInfo) string {
	if bi.Main.Path == ModulePath {
		return withVCS(orDevel(bi.Main.Version), bi.Settings)
	}
	for _, dep := range bi.Deps {
		if dep.Path != ModulePath {
			continue
		}
		if r := dep.Replace; r != nil {
			// A directory replacement has no version: the code is whatever
			// the directory held.
			return orDevel(r.Version)
		}
		return orDevel(dep.Version)
	}
	return "(devel)"
}

func orDevel(v string) string {
	if v == "" {
		return "(devel)"
	}
	return v
}

// withVCS appends the revision and the dirty mark recorded in settings to v,
// unless v already carries them: a tag names its revision, a pseudo-version
// ends with the revision's first twelve characters, and Go appends "+dirty"
// itself; only "(devel)" lacks the revision.
func withVCS(v string, settings []debug.BuildSetting) string {
	var rev string
	var dirty bool
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" && v == "(devel)" {
		v += "-" + rev
	}
	if dirty && !strings.HasSuffix(v, "+dirty") {
		v += "+dirty"
	}
	return v
}
