package distributed

import (
	"strings"
	"testing"
)

// TestEnvHelpListsTheEnvironment: the help a worker binary prints for this
// package lists the AGORA_DISTRIBUTED_* variables it reads.
func TestEnvHelpListsTheEnvironment(t *testing.T) {
	help := EnvHelp()
	for _, want := range []string{envNames.RedisURL, envNames.RedlockRedisURLs, envNames.LeaseTTL, envNames.KeyPrefix} {
		if !strings.Contains(help, want) {
			t.Fatalf("EnvHelp lacks %q:\n%s", want, help)
		}
	}
}
