package redisurl

import (
	"slices"
	"strings"

	"github.com/agora-etl/agora/internal/redact"
)

// Redactor removes secrets (passwords, whole URLs) from text that leaves a
// package: error messages, log lines, status values.
type Redactor struct {
	rep *strings.Replacer // nil when there is nothing to remove
}

// NewRedactor returns a Redactor for the given raw URLs: it replaces each
// URL by its redacted form and each password, in every spelling, by
// redact.Mask.
func NewRedactor(raws ...string) *Redactor {
	type pair struct{ secret, shown string }
	var pairs []pair
	for _, raw := range raws {
		if raw == "" {
			continue
		}
		if shown := redact.URL(raw); shown != raw {
			pairs = append(pairs, pair{raw, shown})
		}
		for _, secret := range redact.Secrets(raw) {
			pairs = append(pairs, pair{secret, redact.Mask})
		}
	}
	if len(pairs) == 0 {
		return &Redactor{}
	}
	// Longer secrets first, so a password that contains another is removed
	// whole.
	slices.SortStableFunc(pairs, func(a, b pair) int { return len(b.secret) - len(a.secret) })
	args := make([]string, 0, 2*len(pairs))
	for _, p := range pairs {
		args = append(args, p.secret, p.shown)
	}
	return &Redactor{rep: strings.NewReplacer(args...)}
}

// Empty reports whether r has nothing to remove (nil counts as empty).
func (r *Redactor) Empty() bool { return r == nil || r.rep == nil }

// Redact removes every secret from s.
func (r *Redactor) Redact(s string) string {
	if r == nil || r.rep == nil {
		return s
	}
	return r.rep.Replace(s)
}

// Wrap returns err with secrets removed from its message; errors.Is and
// errors.As still see the original chain.
func (r *Redactor) Wrap(err error) error {
	if err == nil || r == nil || r.rep == nil {
		return err
	}
	msg := err.Error()
	clean := r.Redact(msg)
	if clean == msg {
		return err
	}
	return &redactedError{err: err, msg: clean}
}

type redactedError struct {
	err error
	msg string
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
