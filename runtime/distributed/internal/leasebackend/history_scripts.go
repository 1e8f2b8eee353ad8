package leasebackend

import _ "embed"

// The run history's read script, for the dashboard and the fleet CLI: it
// reads one pipeline's completed key and answers a little of it, so a
// reader searching a large fleet does not receive every run (see its
// head). It is sent with RunPipelined, one call per pipeline, and is not
// loaded at connect: only readers use it.
var (
	//go:embed lua/history_match.lua
	historyMatchSource string

	// HistoryMatchScript answers how many of a pipeline's runs pass a
	// filter and the ends of the newest of them.
	HistoryMatchScript = newScript(historyMatchSource)
)
