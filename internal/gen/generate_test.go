package gen

import "testing"

func TestBuildsEverywhere(t *testing.T) {
	for name, want := range map[string]bool{
		"worker.go":           true,
		"my_worker.go":        true,
		"jobs_v2.go":          true,
		"worker_windows.go":   false,
		"worker_arm64.go":     false,
		"worker_linux_386.go": false,
		"_worker.go":          false,
		".worker.go":          false,
	} {
		if got := buildsEverywhere(name); got != want {
			t.Errorf("buildsEverywhere(%q) = %v, want %v", name, got, want)
		}
	}
}
