package redact

import (
	"regexp"
	"strings"
)

// userinfoRE finds scheme://user:password@ in text: the password runs to
// the last @ before the next space or quote, since an unencoded @ or / in a
// password is a common mistake and must not leak either.
var userinfoRE = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://[^:@/\s"'<>]*:)([^\s"'<>]*)@`)

// keyValueRE finds password=secret pairs (libpq key/value connection
// strings, URL query parameters).
var keyValueRE = regexp.MustCompile(`(?i)\b((?:password|passwd|pwd|secret|token)=)([^\s&;"']+)`)

// Text returns s, free text that may hold URLs and settings anywhere, with
// the passwords of URLs (redis://user:secret@host becomes
// redis://user:xxxxx@host) and the values of password=... settings
// replaced by Mask.
func Text(s string) string {
	if !strings.Contains(s, "=") && !strings.Contains(s, "@") {
		return s
	}
	s = userinfoRE.ReplaceAllString(s, "${1}"+Mask+"@")
	return keyValueRE.ReplaceAllString(s, "${1}"+Mask)
}
