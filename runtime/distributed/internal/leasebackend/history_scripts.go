package leasebackend

import _ "embed"

// The run history's read scripts, for the dashboard and the fleet CLI:
// each reads one pipeline's completed key and answers a little of it, so
// a reader of a large fleet does not receive every run (see the scripts'
// heads). They are sent with RunPipelined, one call per pipeline, and are
// not loaded at connect: only readers use them.
var (
	//go:embed lua/history_summary.lua
	historySummarySource string
	//go:embed lua/history_match.lua
	historyMatchSource string

	// HistorySummaryScript answers a pipeline's run count, newest run,
	// last success and stale refusals.
	HistorySummaryScript = newScript(historySummarySource)
	// HistoryMatchScript answers how many of a pipeline's runs pass a
	// filter and the ends of the newest of them.
	HistoryMatchScript = newScript(historyMatchSource)
)
