package distributed

import (
	_ "embed"

	"github.com/redis/go-redis/v9"
)

// The scripts run on quorum nodes. Like the primary's, each touches the keys
// of one pipeline only and is sent with EVALSHA, falling back to EVAL after
// NOSCRIPT (a node restarted since it was prepared).
var (
	//go:embed lua/quorum_acquire.lua
	quorumAcquireSource string
	//go:embed lua/quorum_renew.lua
	quorumRenewSource string
	//go:embed lua/quorum_release.lua
	quorumReleaseSource string

	quorumAcquireScript = newScript(quorumAcquireSource)
	quorumRenewScript   = newScript(quorumRenewSource)
	quorumReleaseScript = newScript(quorumReleaseSource)

	quorumScripts = []*redis.Script{quorumAcquireScript, quorumRenewScript, quorumReleaseScript}
)
