package runtime_test

import (
	"errors"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
)

func TestParseScheduleReadsWhatStringWrites(t *testing.T) {
	for _, s := range []runtime.Schedule{runtime.Every(90 * time.Second), runtime.MustCron("*/5 * * * *"),
		runtime.MustCron("0 30 * * * *"), runtime.Continuous(), runtime.Once()} {
		got, err := runtime.ParseSchedule(s.String())
		if err != nil || got.String() != s.String() || got.Kind() != s.Kind() {
			t.Fatalf("ParseSchedule(%s) = %v, %v", s, got, err)
		}
	}
	for _, bad := range []string{"", "every=-1s", "every=soon", `cron="* *"`, "cron=*", "daily"} {
		if _, err := runtime.ParseSchedule(bad); !errors.Is(err, runtime.ErrInvalidSchedule) {
			t.Errorf("ParseSchedule(%q) = %v, want ErrInvalidSchedule", bad, err)
		}
	}
}
