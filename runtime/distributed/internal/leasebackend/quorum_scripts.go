package leasebackend

import (
	_ "embed"

	"github.com/redis/go-redis/v9"
)

// The scripts run on quorum nodes. Like the primary's, each touches the keys
// of one pipeline only and is sent with EVALSHA, falling back to EVAL after
// NOSCRIPT (a node restarted since it was prepared). QuorumAcquireScript
// takes a node's vote for a lease, QuorumRenewScript extends it,
// QuorumReleaseScript gives it back (and records a completed slot).
var (
	//go:embed lua/quorum_acquire.lua
	quorumAcquireSource string
	//go:embed lua/quorum_renew.lua
	quorumRenewSource string
	//go:embed lua/quorum_release.lua
	quorumReleaseSource string

	QuorumAcquireScript = newScript(quorumAcquireSource)
	QuorumRenewScript   = newScript(quorumRenewSource)
	QuorumReleaseScript = newScript(quorumReleaseSource)

	// QuorumScripts are the scripts every quorum node runs, loaded when
	// the node is prepared.
	QuorumScripts = []*redis.Script{QuorumAcquireScript, QuorumRenewScript, QuorumReleaseScript}
)
