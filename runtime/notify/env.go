package notify

import (
	"fmt"
	"os"
	"strconv"
)

// The environment variables FromEnv reads.
const (
	// EnvURL is the webhook's URL; unset or empty: no notifications.
	EnvURL = "AGORA_NOTIFY_URL"
	// EnvOnFailure set to true also sends RunFailed events.
	EnvOnFailure = "AGORA_NOTIFY_ON_FAILURE"
)

// FromEnv returns a Webhook configured by AGORA_NOTIFY_URL and
// AGORA_NOTIFY_ON_FAILURE, or nil when AGORA_NOTIFY_URL is unset or empty.
// Errors name the variable; the URL is shown as Shown shows it.
func FromEnv(lookup func(string) (string, bool), o Options) (*Webhook, error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	raw, _ := lookup(EnvURL)
	if raw == "" {
		return nil, nil
	}
	o.URL = raw
	if v, ok := lookup(EnvOnFailure); ok && v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("notify: %s=%q: want true or false", EnvOnFailure, v)
		}
		o.OnFailure = b
	}
	w, err := New(o)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvURL, err)
	}
	return w, nil
}
