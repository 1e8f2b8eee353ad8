// Package aftergraph finds the cycles among pipelines that wait for each
// other's slots (after=). The pool, agora check and agoragen each report a
// cycle in their own form and at their own position; the search is one.
package aftergraph

// Cycle is one cycle of waits: pipelines none of which would ever start.
type Cycle struct {
	// From is the pipeline whose upstream closes the cycle, and Edge the
	// index of that upstream in From's list: where to report it.
	From string
	Edge int
	// Path runs from the first pipeline of the cycle around to it again,
	// e.g. [a c b a].
	Path []string
}

// Cycles returns each cycle once, searching from roots in order.
// upstreams returns a pipeline's upstreams, and false for an id that is not
// a known pipeline. Unknown upstreams and a pipeline naming itself are left
// out: each caller reports those on its own.
func Cycles(roots []string, upstreams func(id string) ([]string, bool)) []Cycle {
	const (
		unseen = iota
		onPath
		finished
	)
	state := map[string]int{}
	var (
		path   []string
		cycles []Cycle
		visit  func(id string, ups []string)
	)
	visit = func(id string, ups []string) {
		state[id] = onPath
		path = append(path, id)
		for i, up := range ups {
			next, ok := upstreams(up)
			if !ok || up == id {
				continue
			}
			switch state[up] {
			case unseen:
				visit(up, next)
			case onPath:
				start := len(path) - 1
				for path[start] != up {
					start--
				}
				cycle := append(append([]string{}, path[start:]...), up)
				cycles = append(cycles, Cycle{From: id, Edge: i, Path: cycle})
			}
		}
		path = path[:len(path)-1]
		state[id] = finished
	}
	for _, id := range roots {
		if ups, ok := upstreams(id); ok && len(ups) > 0 && state[id] == unseen {
			visit(id, ups)
		}
	}
	return cycles
}
