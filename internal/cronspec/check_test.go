package cronspec

import (
	"strings"
	"testing"
)

// TestRefusesNeverFiringAndOverlongSteps: expressions that never fire,
// or whose step cannot reach a second value, used to parse (February 30th
// idled for ever; */61 silently meant minute 0).
func TestRefusesNeverFiringAndOverlongSteps(t *testing.T) {
	for expr, want := range map[string]string{
		"0 0 30 2 *":                          "never fires",
		"CRON_TZ=UTC 0 0 31 2,4,6,9,11 *":     "never fires",
		"CRON_TZ=America/New_York 0 0 30 2 *": "never fires",
		"*/61 * * * *":                        `minute field "*/61": step /61 is beyond the field's range 0-59`,
		"*/60 * * * *":                        "step /60 is beyond",
		"0 */24 * * *":                        `hour field "*/24"`,
		"0 0 */31 * *":                        `day-of-month field "*/31"`,
		"0 0 1 */12 *":                        `month field "*/12"`,
		"0 0 * * 1-5/7":                       `day-of-week field "1-5/7"`,
		"*/60 * * * * *":                      `second field "*/60"`,
		"0 0,*/70 * * *":                      `hour field "0,*/70"`,
	} {
		_, err := Parse(expr)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", expr, err, want)
		}
	}
	for _, expr := range []string{"*/59 * * * *", "0 */23 * * *", "0 0 29 2 *", "0 0 */30 * *", "0 0 1 */11 *", "0 0 * * */6", "5-50/45 * * * *"} {
		if _, err := Parse(expr); err != nil {
			t.Errorf("Parse(%q) = %v, want it accepted", expr, err)
		}
	}
}
