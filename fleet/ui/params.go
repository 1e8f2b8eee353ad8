package ui

import (
	"strings"

	"github.com/agora-etl/agora/runtime"
)

// formParams reads the trigger form's params field: one key=value per
// line, blank lines ignored, checked as "fleet trigger --param" checks
// its arguments (runtime.ParseParams). A line is taken as it is, but for
// its line ending, so a value keeps its spaces.
func formParams(text string) (map[string]string, error) {
	var args []string
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\r\n")
		if strings.TrimSpace(line) == "" {
			continue
		}
		args = append(args, line)
	}
	return runtime.ParseParams(args)
}
