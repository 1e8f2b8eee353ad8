package cronspec

import "testing"

// TestDescribeNamesTheFieldAtFault: a field robfig/cron refuses is named,
// with what it accepts; config's and agoragen's diagnostics show these
// words as they are.
func TestDescribeNamesTheFieldAtFault(t *testing.T) {
	checkParseErrors(t, []errorCase{
		{"* * *", []string{"has 3 fields, want 5 (minute hour day-of-month month day-of-week) or 6 (a leading seconds field, then those five)"}},
		{"* * * * * * *", []string{"has 7 fields"}},
		{"0", []string{"has 1 field, want 5"}},
		{"60 * * * *", []string{`minute field "60": end of range (60) above maximum (59): 60 (minutes are 0-59)`}},
		{"0 24 * * *", []string{`hour field "24"`, "hours are 0-23"}},
		{"0 0 0 * *", []string{`day-of-month field "0"`, "below minimum (1)"}},
		{"0 0 1 13 *", []string{`month field "13"`, "jan-dec"}},
		{"0 0 1 foo *", []string{`month field "foo": "foo" is not a number or a name (months are 1-12 or jan-dec)`}},
		{"0 0 * * 7", []string{`day-of-week field "7"`, "(days of the week are 0-6 or sun-sat, Sunday is 0)"}},
		{"0 0 * * mon-funday", []string{`day-of-week field "mon-funday"`}},
		{"61 0 0 * * *", []string{`second field "61"`, "seconds are 0-59"}},
		{"*/0 * * * *", []string{`minute field "*/0"`, "step"}},
		{"5-1 * * * *", []string{`minute field "5-1"`, "beyond end"}},
		{"1-2-3 * * * *", []string{`minute field "1-2-3"`, "hyphens"}},
		{"0 0 L * *", []string{`day-of-month field "L": "L" is not a number or a name (days of the month are 1-31)`}},
		{"@reboot", []string{`unknown descriptor "@reboot" (want @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly or @every <duration>)`}},
		{"@daily 5", []string{`unknown descriptor "@daily 5"`}},
	})
}
