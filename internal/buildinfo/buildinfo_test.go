package buildinfo

import (
	"runtime/debug"
	"testing"
)

func vcs(rev string, modified bool) []debug.BuildSetting {
	m := "false"
	if modified {
		m = "true"
	}
	return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: m}}
}

const rev = "0c0f820abcde1234567890abcdef1234567890ab"

func TestFromBuildInfo(t *testing.T) {
	for _, tc := range []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"dependency", debug.BuildInfo{
			Main: debug.Module{Path: "example.com/orders", Version: "v3.0.0"},
			Deps: []*debug.Module{{Path: "github.com/redis/go-redis/v9", Version: "v9.7.0"}, {Path: ModulePath, Version: "v1.4.2"}},
			// The user's revision is not agora's.
			Settings: vcs(rev, true),
		}, "v1.4.2"},
		{"dependency replaced by a version", debug.BuildInfo{
			Main: debug.Module{Path: "example.com/orders"},
			Deps: []*debug.Module{{Path: ModulePath, Version: "v1.4.2", Replace: &debug.Module{Path: "example.com/fork", Version: "v1.4.3-fix"}}},
		}, "v1.4.3-fix"},
		{"dependency replaced by a directory", debug.BuildInfo{
			Main: debug.Module{Path: "example.com/orders"},
			Deps: []*debug.Module{{Path: ModulePath, Version: "v1.4.2", Replace: &debug.Module{Path: "../agora"}}},
		}, "(devel)"},
		{"not in the build", debug.BuildInfo{Main: debug.Module{Path: "example.com/other"}}, "(devel)"},
		{"main module, tagged", debug.BuildInfo{
			Main: debug.Module{Path: ModulePath, Version: "v1.5.0"}, Settings: vcs(rev, false),
		}, "v1.5.0"},
		{"main module, tagged, dirty", debug.BuildInfo{
			Main: debug.Module{Path: ModulePath, Version: "v1.5.0+dirty"}, Settings: vcs(rev, true),
		}, "v1.5.0+dirty"},
		{"main module, pseudo-version with its revision", debug.BuildInfo{
			Main: debug.Module{Path: ModulePath, Version: "v1.5.1-0.20261202031221-0c0f820abcde+dirty"}, Settings: vcs(rev, true),
		}, "v1.5.1-0.20261202031221-0c0f820abcde+dirty"},
		{"main module, devel, dirty", debug.BuildInfo{
			Main: debug.Module{Path: ModulePath, Version: "(devel)"}, Settings: vcs(rev, true),
		}, "(devel)-0c0f820abcde+dirty"},
		{"main module, no VCS", debug.BuildInfo{Main: debug.Module{Path: ModulePath}}, "(devel)"},
	} {
		if got := fromBuildInfo(&tc.bi); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestVersionIsStable(t *testing.T) {
	if v := Version(); v == "" || v != Version() {
		t.Fatalf("Version() = %q, then %q", v, Version())
	}
}
