package connguard

// Bounds of Cap.
const (
	// MinConns lets a few probes in even where descriptors are scarce.
	MinConns = 4
	// MaxConns is plenty for probes and scrapes; more is a flood.
	MaxConns = 128
)

// Cap is how many connections a guarded server holds at once in a process
// allowed nofile descriptors: a sixteenth of them, within MinConns and
// MaxConns, so that the rest stay for the work the process does.
func Cap(nofile uint64) int {
	return int(min(max(nofile/16, MinConns), MaxConns))
}
