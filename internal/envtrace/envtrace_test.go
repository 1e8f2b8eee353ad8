package envtrace

import (
	"os"
	"path/filepath"
	"testing"
)

func TestEndpointConfigured(t *testing.T) {
	for _, tc := range []struct {
		base, traces string
		want         bool
	}{
		{"", "", false},
		{"http://127.0.0.1:4318", "", true},
		{"", "http://127.0.0.1:4318/v1/traces", true},
	} {
		t.Setenv(EnvEndpoint, tc.base)
		t.Setenv(EnvTracesEndpoint, tc.traces)
		if got := EndpointConfigured(); got != tc.want {
			t.Errorf("endpoint %q, traces endpoint %q: EndpointConfigured() = %v, want %v", tc.base, tc.traces, got, tc.want)
		}
	}
}

func TestDisabled(t *testing.T) {
	for value, want := range map[string]bool{"": false, "false": false, "true": true, " TRUE ": true, "1": false} {
		t.Setenv(EnvSDKDisabled, value)
		if got := Disabled(); got != want {
			t.Errorf("%s=%q: Disabled() = %v, want %v", EnvSDKDisabled, value, got, want)
		}
	}
}

func TestServiceName(t *testing.T) {
	t.Setenv(EnvServiceName, "")
	if got, want := ServiceName(""), filepath.Base(os.Args[0]); got != want {
		t.Errorf("no name, no variable: %q, want the program's name %q", got, want)
	}
	t.Setenv(EnvServiceName, "from-env")
	if got := ServiceName(""); got != "from-env" {
		t.Errorf("variable set: %q, want from-env", got)
	}
	if got := ServiceName("given"); got != "given" {
		t.Errorf("name given: %q, want given", got)
	}
}
