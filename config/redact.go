package config

import "github.com/agora-etl/agora/internal/redact"

// Redact returns s with the passwords of URLs (redis://user:secret@host
// becomes redis://user:xxxxx@host) and of password=... settings replaced,
// so s can be printed, logged or shown in /status. It is the rule agora's
// own output follows, for a program's own.
func Redact(s string) string { return redact.Text(s) }
