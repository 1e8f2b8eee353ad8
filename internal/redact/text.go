package redact

import (
	"regexp"
	"strconv"
	"strings"
)

// userinfoRE finds scheme://user:password@ in text: the password runs to
// the last @ before the next space, since an unencoded @, /, ' or " in a
// password is a common mistake and must not leak either. A password with
// a space is only found whole inside a quoted string (see quotedRE).
var userinfoRE = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://[^:@/\s"'<>]*:)([^\s<>]*)@`)

// keyValueRE finds secret=value pairs (libpq key/value connection strings,
// URL query parameters): a key that contains password, passwd, secret or
// token anywhere (sslpassword, db_password, access_token) or is pwd, and
// its value, quoted with ' or " or up to the next space, & or ;.
var keyValueRE = regexp.MustCompile(`(?i)((?:[A-Za-z0-9_.-]*(?:password|passwd|secret|token)[A-Za-z0-9_.-]*|\bpwd)=)('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|[^\s&;]+)`)

// quotedRE finds Go-quoted strings, as %q writes them: inside one, a URL
// is the whole string, so its password ends at its last '@' whatever it
// holds (spaces and quotes included).
var quotedRE = regexp.MustCompile(`"(?:[^"\\\n]|\\.)*"`)

// schemeRE matches the start of a URL.
var schemeRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://`)

// Text returns s, free text that may hold URLs and settings anywhere, with
// the passwords of URLs (redis://user:secret@host becomes
// redis://user:xxxxx@host) and the values of password=... settings
// replaced by Mask. Quoted strings ("..." as %q writes them) are read
// unquoted first, so a password with quotes, spaces or escapes inside one
// is hidden whole.
func Text(s string) string {
	if !strings.Contains(s, "=") && !strings.Contains(s, "@") {
		return s
	}
	if strings.Contains(s, `"`) {
		s = quotedRE.ReplaceAllStringFunc(s, redactQuoted)
	}
	return plain(s)
}

// redactQuoted redacts one Go-quoted string, and quotes the result again.
func redactQuoted(q string) string {
	inner, err := strconv.Unquote(q)
	if err != nil {
		return q
	}
	out := inner
	if schemeRE.MatchString(out) {
		out = URL(out)
	}
	out = plain(out)
	if out == inner {
		return q
	}
	return strconv.Quote(out)
}

// plain applies the URL and key=value rules to unquoted text. A value that
// is already Mask is left alone, so text redacted once (a quoted string
// above) keeps its closing quote.
func plain(s string) string {
	s = userinfoRE.ReplaceAllStringFunc(s, func(m string) string {
		sub := userinfoRE.FindStringSubmatch(m)
		if sub[2] == Mask {
			return m
		}
		return sub[1] + Mask + "@"
	})
	return keyValueRE.ReplaceAllStringFunc(s, func(m string) string {
		sub := keyValueRE.FindStringSubmatch(m)
		if strings.HasPrefix(sub[2], Mask) {
			return m
		}
		return sub[1] + Mask
	})
}
