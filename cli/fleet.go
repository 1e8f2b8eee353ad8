package cli

import (
	"github.com/agora-etl/agora/fleet"
	// The Redis backend of "agora fleet", which also every generated worker
	// links in.
	_ "github.com/agora-etl/agora/runtime/distributed"
)

// fleetCommand serves "agora fleet ...": the fleet package's commands,
// found with the AGORA_DISTRIBUTED_* settings, exactly as "./worker fleet".
func fleetCommand(e *env, args []string) int {
	return fleet.Run(e.ctx, args, e.stdout, e.stderr)
}
