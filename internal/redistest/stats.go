package redistest

import (
	"strconv"
	"strings"
)

// CommandStat is one command's line of INFO commandstats.
type CommandStat struct {
	Calls       int64 // calls, including those made from scripts
	Usec        int64 // total CPU time the server spent in it, in µs
	FailedCalls int64 // calls that returned an error
}

// ParseCommandStats reads the cmdstat_* lines of an INFO reply into a map
// keyed by the lower-case command name ("evalsha", "set", "client|setinfo").
func ParseCommandStats(info string) map[string]CommandStat {
	out := map[string]CommandStat{}
	for _, line := range strings.Split(info, "\n") {
		name, fields, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		var st CommandStat
		for _, kv := range strings.Split(fields, ",") {
			k, v, _ := strings.Cut(kv, "=")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "calls":
				st.Calls = n
			case "usec":
				st.Usec = n
			case "failed_calls":
				st.FailedCalls = n
			}
		}
		out[strings.TrimPrefix(name, "cmdstat_")] = st
	}
	return out
}

// ParseErrorStats reads the errorstat_* lines of an INFO reply into counts
// keyed by error prefix ("NOSCRIPT", "ERR").
func ParseErrorStats(info string) map[string]int64 {
	out := map[string]int64{}
	for _, line := range strings.Split(info, "\n") {
		name, fields, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "errorstat_") {
			continue
		}
		_, v, _ := strings.Cut(fields, "=")
		n, _ := strconv.ParseInt(v, 10, 64)
		out[strings.TrimPrefix(name, "errorstat_")] = n
	}
	return out
}

// ParseCPUSeconds returns used_cpu_sys + used_cpu_user of an INFO reply: the
// CPU time the server process has used, in seconds.
func ParseCPUSeconds(info string) float64 {
	var total float64
	for _, line := range strings.Split(info, "\n") {
		name, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && (name == "used_cpu_sys" || name == "used_cpu_user") {
			f, _ := strconv.ParseFloat(v, 64)
			total += f
		}
	}
	return total
}
