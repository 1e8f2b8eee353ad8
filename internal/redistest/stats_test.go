package redistest

import "testing"

const sampleInfo = "# Commandstats\r\n" +
	"cmdstat_evalsha:calls=12,usec=60,usec_per_call=5.00,rejected_calls=0,failed_calls=3\r\n" +
	"cmdstat_client|setinfo:calls=2,usec=1,usec_per_call=0.50,rejected_calls=0,failed_calls=0\r\n" +
	"# Errorstats\r\n" +
	"errorstat_NOSCRIPT:count=3\r\n" +
	"# CPU\r\n" +
	"used_cpu_sys:1.250000\r\nused_cpu_user:0.500000\r\nused_cpu_sys_children:9.000000\r\n"

func TestParseCommandStats(t *testing.T) {
	got := ParseCommandStats(sampleInfo)
	if want := (CommandStat{Calls: 12, Usec: 60, FailedCalls: 3}); got["evalsha"] != want {
		t.Errorf("evalsha = %+v, want %+v", got["evalsha"], want)
	}
	if got["client|setinfo"].Calls != 2 || len(got) != 2 {
		t.Errorf("stats = %+v", got)
	}
}

func TestParseErrorStats(t *testing.T) {
	got := ParseErrorStats(sampleInfo)
	if got["NOSCRIPT"] != 3 || len(got) != 1 {
		t.Errorf("errors = %v, want NOSCRIPT 3 only", got)
	}
}

func TestParseCPUSeconds(t *testing.T) {
	if got := ParseCPUSeconds(sampleInfo); got != 1.75 {
		t.Errorf("cpu = %v, want 1.75 (children excluded)", got)
	}
}
