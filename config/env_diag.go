package config

import (
	"strconv"
	"strings"
	"unicode"
)

// envValue is a string of the document that came from a ${VAR} reference:
// raw is the text as written, value what it expanded to.
type envValue struct{ raw, value string }

// quoted is how a diagnostic shows the string v found at p when v itself
// is what is wrong (an unknown type or mode, a bad duration): quoted with
// strconv.Quote (control characters escaped), and, when v came from a
// ${VAR} reference, as the reference written in the file, followed by what
// it expanded to unless that holds a secret:
//
//	unknown source type "${SRC_TYPE}" (expanded to "bogus")
//
// A value that is not the point of a message is never shown expanded:
// atValue puts the reference in its place (see envReferences).
func (d *decoder) quoted(p path, v string) string {
	ev, ok := d.fromEnv[p.id()]
	if !ok || ev.value != v {
		return strconv.Quote(v)
	}
	s := strconv.Quote(ev.raw)
	if d.known == nil || d.known.Text(v) == v {
		s += " (expanded to " + strconv.Quote(v) + ")"
	}
	return s
}

// envReferences replaces, in msg about the value at p, that value as
// expanded from ${VAR} with the reference as written: messages from other
// packages (a time zone, a cron expression, a URL) quote the value they
// were given, which is not the point when the file says ${VAR}.
func (d *decoder) envReferences(p path, msg string) string {
	ev, ok := d.fromEnv[p.id()]
	if !ok || ev.value == "" || strings.Contains(msg, ev.raw) {
		return msg
	}
	msg = strings.ReplaceAll(msg, strconv.Quote(ev.value), strconv.Quote(ev.raw))
	if len(ev.value) >= 4 {
		// Short values ("1", "on") would match inside other words.
		msg = strings.ReplaceAll(msg, ev.value, ev.raw)
	}
	return msg
}

// escapeControl writes the control characters of a message as Go escapes
// (\n, \t, \x00), so every diagnostic stays one line however a value in it
// got there.
func escapeControl(msg string) string {
	if !strings.ContainsFunc(msg, unicode.IsControl) {
		return msg
	}
	var b strings.Builder
	for _, r := range msg {
		if unicode.IsControl(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
