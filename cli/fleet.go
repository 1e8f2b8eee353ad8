package cli

import (
	"github.com/agora-etl/agora/fleet"
	"github.com/agora-etl/agora/fleet/ui"
)

// fleetCommand serves "agora fleet ...": the fleet package's commands over
// a distributed.Inspector, found with the AGORA_DISTRIBUTED_* settings,
// exactly as "./worker fleet", and the dashboard (fleet ui), which worker
// binaries do not link.
func fleetCommand(e *env, args []string) int {
	return fleet.Run(e.ctx, args, e.stdout, e.stderr, fleet.WithDashboard(ui.Dashboard))
}
