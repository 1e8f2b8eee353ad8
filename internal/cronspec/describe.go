package cronspec

import (
	"fmt"
	"strings"
)

// describeCronError rewrites a robfig/cron error so that it names the field
// at fault and what the field accepts.
func describeCronError(rest string, err error) error {
	if strings.HasPrefix(rest, "@") {
		return fmt.Errorf("unknown descriptor %q (want @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly or @every <duration>)", rest)
	}
	fields := strings.Fields(rest)
	if len(fields) < 5 || len(fields) > 6 {
		noun := "fields"
		if len(fields) == 1 {
			noun = "field"
		}
		return fmt.Errorf("has %d %s, want 5 (minute hour day-of-month month day-of-week) or 6 (a leading seconds field, then those five)", len(fields), noun)
	}
	offset := 6 - len(fields)
	for i, f := range fields {
		probe := make([]string, len(fields))
		for j := range probe {
			probe[j] = "*"
		}
		probe[i] = f
		if _, ferr := cronFields.Parse(strings.Join(probe, " ")); ferr != nil {
			name := fieldNames[i+offset]
			return fmt.Errorf("%s field %q: %s (%s)", name, f, fieldProblem(ferr), fieldHint(name))
		}
	}
	return err
}

// fieldProblem shortens robfig/cron's number error, which otherwise carries
// a strconv message meant for programmers.
func fieldProblem(err error) string {
	msg := err.Error()
	const notInt = "failed to parse int from "
	if rest, ok := strings.CutPrefix(msg, notInt); ok {
		if token, _, found := strings.Cut(rest, ": "); found {
			return fmt.Sprintf("%q is not a number or a name", token)
		}
	}
	return msg
}

func fieldHint(name string) string {
	switch name {
	case "second", "minute":
		return name + "s are 0-59"
	case "hour":
		return "hours are 0-23"
	case "day-of-month":
		return "days of the month are 1-31"
	case "month":
		return "months are 1-12 or jan-dec"
	default:
		return "days of the week are 0-6 or sun-sat, Sunday is 0"
	}
}
