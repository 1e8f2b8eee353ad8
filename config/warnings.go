package config

import "fmt"

// fencedLeaseSink is implemented by the configurations of sinks that refuse
// the writes of a run without a fenced lease (the postgres and sqlite
// sinks, unless allow_unfenced is set).
type fencedLeaseSink interface{ RequiresFencedLease() bool }

// Warnings returns what is valid but will not work as the file stands,
// as file:line:col diagnostics: agora check prints them as warnings and
// still exits 0. coordinated says whether the worker will share leases
// through Redis (AGORA_DISTRIBUTED_REDIS_URL set). Without it, every run of
// a pipeline with a fenced SQL sink fails (fencing token 0), so each such
// sink is named, with the two ways out: set AGORA_DISTRIBUTED_REDIS_URL
// (agora/v1 has no key for it: the environment is the only place) or set
// allow_unfenced = true on the sink.
func (f *File) Warnings(coordinated bool) Diagnostics {
	if coordinated {
		return nil
	}
	var out Diagnostics
	for _, p := range f.Pipelines {
		for _, s := range p.Sinks {
			fs, ok := s.Config.(fencedLeaseSink)
			if !ok || !fs.RequiresFencedLease() {
				continue
			}
			out = append(out, Diagnostic{File: f.Path, Line: s.pos.line, Col: s.pos.col, Message: fmt.Sprintf(
				"%s: the %s sink writes only under a fenced lease, and no coordinator is configured: every run would fail (fencing token 0); "+
					"set AGORA_DISTRIBUTED_REDIS_URL so runs hold fenced leases, or allow_unfenced = true on this sink to write without fencing",
				s.at, s.Type)})
		}
	}
	return out
}
