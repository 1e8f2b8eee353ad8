package cli

import (
	"github.com/agora-etl/agora/fleet"
)

// fleetCommand serves "agora fleet ...": the fleet package's commands over
// a distributed.Inspector, found with the AGORA_DISTRIBUTED_* settings,
// exactly as "./worker fleet".
func fleetCommand(e *env, args []string) int {
	return fleet.Run(e.ctx, args, e.stdout, e.stderr)
}
