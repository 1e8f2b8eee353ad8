package runtime

import "github.com/agora-etl/agora/internal/buildinfo"

// Version returns the version of the agora module the binary was built
// with: what `agora version`, a worker's version subcommand, its record in
// Redis and the agora_build_info metric print (see internal/buildinfo for
// how it is worked out: the agora module's version, "(devel)" with the VCS
// revision for a build inside the module itself).
func Version() string { return buildinfo.Version() }
