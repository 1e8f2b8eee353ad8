package history_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime/history"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]history.Policy{
		"":         {Limit: 100, MaxAge: 168 * time.Hour},
		"100,168h": {Limit: 100, MaxAge: 168 * time.Hour},
		"20":       {Limit: 20, MaxAge: 168 * time.Hour},
		" 5 , 1h ": {Limit: 5, MaxAge: time.Hour},
		"off":      {Off: true},
		"0":        {Off: true},
	} {
		got, err := history.Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"many", "-1", "10,soon", "10,-1h"} {
		_, err := history.Parse(in)
		if !errors.Is(err, history.ErrBadPolicy) || !strings.Contains(err.Error(), "RUNS[,MAX_AGE]") || !strings.HasPrefix(err.Error(), "history: ") {
			t.Errorf("Parse(%q) error = %v", in, err)
		}
	}
}

func TestPolicyStringReadsBack(t *testing.T) {
	for _, p := range []history.Policy{{}, {Off: true}, {Limit: 5}, {Limit: 500, MaxAge: 24 * time.Hour}} {
		got, err := history.Parse(p.String())
		if want := p; !want.Off {
			want = want.WithDefaults()
			if err != nil || got != want {
				t.Errorf("Parse(%q) = %+v, %v; want %+v", p.String(), got, err, want)
			}
		} else if err != nil || !got.Off {
			t.Errorf("Parse(%q) = %+v, %v; want off", p.String(), got, err)
		}
	}
}
