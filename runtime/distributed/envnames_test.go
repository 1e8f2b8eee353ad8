package distributed

import (
	"reflect"
	"testing"
)

// TestEnvNamesMatchConfigTags keeps the variable names used in settings
// errors equal to the ones LoadConfig reads, so the two lists cannot drift.
func TestEnvNamesMatchConfigTags(t *testing.T) {
	names := reflect.ValueOf(envNames)
	cfg := reflect.TypeOf(Config{})
	for i := 0; i < names.NumField(); i++ {
		setting := names.Type().Field(i).Name
		field, ok := cfg.FieldByName(setting)
		if !ok {
			t.Errorf("settingNames.%s has no Config field", setting)
			continue
		}
		want := EnvPrefix + "_" + field.Tag.Get("envconfig")
		if got := names.Field(i).String(); got != want {
			t.Errorf("envNames.%s = %q, but Config reads %q", setting, got, want)
		}
	}
}
