package cronspec

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// fieldRanges are the smallest and largest value of each field, seconds
// first, as robfig/cron reads them.
var fieldRanges = [...][2]int{{0, 59}, {0, 59}, {0, 23}, {1, 31}, {1, 12}, {0, 6}}

// checkSteps refuses a step that cannot reach a second value of its
// field: robfig/cron accepts "*/61" in the minute field and it silently
// means minute 0 only, which is never what was meant.
func checkSteps(rest string) error {
	fields := strings.Fields(rest)
	if len(fields) < 5 || len(fields) > 6 {
		return nil // descriptors; the field count is robfig/cron's to refuse
	}
	offset := 6 - len(fields)
	for i, f := range fields {
		r := fieldRanges[i+offset]
		for _, part := range strings.Split(f, ",") {
			_, step, ok := strings.Cut(part, "/")
			if !ok {
				continue
			}
			n, err := strconv.Atoi(step)
			if err != nil {
				continue // robfig/cron says what is wrong with it
			}
			if span := r[1] - r[0]; n > span {
				name := fieldNames[i+offset]
				return fmt.Errorf("%s field %q: step /%d is beyond the field's range %d-%d, so it would mean one value only; use a step of at most %d, or write the value itself",
					name, f, n, r[0], r[1], span)
			}
		}
	}
	return nil
}

// neverFiresFrom is the instant from which an expression is asked for its
// next fire time to tell whether it ever fires. robfig/cron looks five years
// ahead, which covers February 29.
var neverFiresFrom = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// checkFires refuses an expression that matches no date, such as
// "0 0 30 2 *" (February 30): a pipeline with it would idle for ever while
// its worker reports ready.
func checkFires(n Spec) error {
	if n.Next(neverFiresFrom).IsZero() {
		return fmt.Errorf("never fires: no date matches its day-of-month, month and day-of-week fields")
	}
	return nil
}
