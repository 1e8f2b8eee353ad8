package runtime_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/internal/syncbuf"
	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/clocktest"
)

// AGORA_TEST_CLOCK_OFFSET shifts SystemClock only in a binary built with
// -tags agora_testclock, and such a binary says so in one WARN line when a
// pool starts. The variable is read when the binary starts, so the test
// runs itself again with it set. make test runs the plain build (the
// variable must do nothing); go test -tags agora_testclock runs the other,
// and cli's clock-skew fleet runs both.

const testClockHelperEnv = "AGORA_TEST_CLOCK_HELPER"

func TestTestClockOffsetOnlyWithTheBuildTag(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestTestClockHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), testClockHelperEnv+"=1", "AGORA_TEST_CLOCK_OFFSET=1h")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	var shift time.Duration
	var warns int
	for _, l := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(l, "SHIFT "); ok {
			d, err := time.ParseDuration(strings.TrimSpace(v))
			if err != nil {
				t.Fatalf("helper line %q: %v", l, err)
			}
			shift = d.Round(time.Minute)
		}
		if (strings.Contains(l, "level=WARN") || strings.Contains(l, `"level":"WARN"`)) && strings.Contains(l, "AGORA_TEST_CLOCK_OFFSET") {
			warns++
		}
	}
	want, wantWarns := time.Duration(0), 0
	if runtime.TestClockBuild {
		want, wantWarns = time.Hour, 1
	}
	if shift != want || warns != wantWarns {
		t.Fatalf("tagged build %v: SystemClock shifted by %v with %d WARN lines naming the variable; want %v and %d\n%s",
			runtime.TestClockBuild, shift, warns, want, wantWarns, out)
	}
}

// TestTestClockHelper prints how far SystemClock is from time.Now, and
// starts a pool so that it may warn.
func TestTestClockHelper(t *testing.T) {
	if os.Getenv(testClockHelperEnv) != "1" {
		t.Skip("run by TestTestClockOffsetOnlyWithTheBuildTag")
	}
	fmt.Printf("SHIFT %v\n", time.Until(runtime.SystemClock{}.Now()))
	logs := &syncbuf.Buffer{}
	d := &poolDriver{clock: clocktest.NewFake(t0), logs: logs}
	d.start(t, &runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.MustCron("0 0 * * *"),
		Factory: func(context.Context) (runtime.Pipeline, error) {
			return runtime.PipelineFunc(func(context.Context) error { return nil }), nil
		}})
	if err := d.stop(t); err != nil {
		t.Fatal(err)
	}
	fmt.Print(logs.String())
}
