package config

import (
	"regexp"
	"strings"
)

// redacted replaces a password wherever this package prints a value.
const redacted = "xxxxx"

// userinfoRE finds scheme://user:password@ in text: the password runs to
// the last @ before the next space or quote, since an unencoded @ or / in a
// password is a common mistake and must not leak either.
var userinfoRE = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://[^:@/\s"'<>]*:)([^\s"'<>]*)@`)

// keyValueRE finds password=secret pairs (libpq key/value connection
// strings, URL query parameters).
var keyValueRE = regexp.MustCompile(`(?i)\b((?:password|passwd|pwd|secret|token)=)([^\s&;"']+)`)

// Redact returns s with the passwords of URLs (redis://user:secret@host
// becomes redis://user:xxxxx@host) and of password=... settings replaced,
// so s can be printed, logged or shown in /status.
func Redact(s string) string {
	if !strings.Contains(s, "=") && !strings.Contains(s, "@") {
		return s
	}
	s = userinfoRE.ReplaceAllString(s, "${1}"+redacted+"@")
	return keyValueRE.ReplaceAllString(s, "${1}"+redacted)
}
