package sqlrec

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agora-etl/agora/runtime"
)

// The named parameters a source query may use.
const (
	ParamRunNumber    = "run_number"
	ParamFencingToken = "fencing_token"
	ParamSlotTime     = "slot_time"
	ParamLastSlotTime = "last_slot_time"
)

// ParamNames lists the named parameters, in documentation order.
var ParamNames = []string{ParamRunNumber, ParamFencingToken, ParamSlotTime, ParamLastSlotTime}

// RunParamPrefix starts a named parameter that reads a run parameter:
// :param_day is the run's parameter day (runtime.ParamsFromContext, with
// the pipeline's declared defaults filled in), bound as text.
const RunParamPrefix = "param_"

// RunParam returns the run parameter a named parameter reads, if it is one
// (:param_<name> with a name that is an identifier).
func RunParam(name string) (string, bool) {
	rest, ok := strings.CutPrefix(name, RunParamPrefix)
	return rest, ok && runtime.ValidParamName(rest)
}

// Query is a source query with its named parameters replaced by
// positional ones.
type Query struct {
	// SQL is the rewritten query.
	SQL string
	// Params names the positional parameters in order: Params[0] is $1.
	Params []string
}

// Uses reports whether the query uses the named parameter.
func (q Query) Uses(name string) bool { return slices.Contains(q.Params, name) }

// RunParams returns the run parameters the query reads (day for
// :param_day), in order of first use.
func (q Query) RunParams() []string {
	var out []string
	for _, p := range q.Params {
		if name, ok := RunParam(p); ok {
			out = append(out, name)
		}
	}
	return out
}

// ErrMissingRunParam is wrapped by RunParamValue's error: the run has no
// value for a parameter the query reads.
var ErrMissingRunParam = errors.New("sqlrec: the run has no value for a run parameter the query reads")

// RunParamValue returns the value of the named parameter name
// (:param_<key>) in the run of ctx, or an error naming it and the
// parameters the run has.
func RunParamValue(ctx context.Context, name string) (string, error) {
	key, _ := RunParam(name)
	params := runtime.ParamsFromContext(ctx)
	if v, ok := params[key]; ok {
		return v, nil
	}
	have := "none"
	if len(params) > 0 {
		have = strings.Join(slices.Sorted(maps.Keys(params)), ", ")
	}
	return "", fmt.Errorf("%w: :%s (the run's parameters: %s); declare %s in the pipeline's params with a default, or trigger it with --param %s=VALUE",
		ErrMissingRunParam, name, have, key, key)
}

// ParseQuery replaces each :name in query (outside string literals, quoted
// identifiers, comments and PostgreSQL's :: casts) by a positional
// parameter written by placeholder(n), n counting from 1; a name used
// twice gets the same number. A :name that is not one of ParamNames nor a
// run parameter (:param_<name>, RunParam) is an error naming it and its
// byte offset.
func ParseQuery(query string, placeholder func(n int) string) (Query, error) {
	var out strings.Builder
	var q Query
	for i := 0; i < len(query); {
		c := query[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			j := closeQuote(query, i, c)
			out.WriteString(query[i:j])
			i = j
		case c == '-' && strings.HasPrefix(query[i:], "--"):
			j := strings.IndexByte(query[i:], '\n')
			if j < 0 {
				j = len(query) - i
			}
			out.WriteString(query[i : i+j])
			i += j
		case c == '/' && strings.HasPrefix(query[i:], "/*"):
			j := strings.Index(query[i+2:], "*/")
			end := len(query)
			if j >= 0 {
				end = i + 2 + j + 2
			}
			out.WriteString(query[i:end])
			i = end
		case c == '$' && dollarTag(query[i:]) != "":
			tag := dollarTag(query[i:])
			j := strings.Index(query[i+len(tag):], tag)
			end := len(query)
			if j >= 0 {
				end = i + len(tag) + j + len(tag)
			}
			out.WriteString(query[i:end])
			i = end
		case c == ':' && strings.HasPrefix(query[i:], "::"):
			out.WriteString("::")
			i += 2
		case c == ':' && i+1 < len(query) && isIdentStart(query[i+1]):
			j := i + 1
			for j < len(query) && isIdentPart(query[j]) {
				j++
			}
			name := query[i+1 : j]
			if _, run := RunParam(name); !run && !slices.Contains(ParamNames, name) {
				return Query{}, fmt.Errorf("unknown parameter :%s at offset %d (known: :%s, and :%s<name> for a run parameter)",
					name, i, strings.Join(ParamNames, ", :"), RunParamPrefix)
			}
			n := slices.Index(q.Params, name)
			if n < 0 {
				q.Params = append(q.Params, name)
				n = len(q.Params) - 1
			}
			out.WriteString(placeholder(n + 1))
			i = j
		default:
			out.WriteByte(c)
			i++
		}
	}
	q.SQL = out.String()
	return q, nil
}

// closeQuote returns the index just past the quoted text starting at i; a
// doubled quote character inside stays inside.
func closeQuote(s string, i int, quote byte) int {
	for j := i + 1; j < len(s); j++ {
		if s[j] == quote {
			if j+1 < len(s) && s[j+1] == quote {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(s)
}

// dollarTag returns the PostgreSQL dollar-quote tag ($$ or $tag$) s starts
// with, or "" (a $1 parameter is no tag).
func dollarTag(s string) string {
	for j := 1; j < len(s); j++ {
		switch c := s[j]; {
		case c == '$':
			return s[:j+1]
		case j == 1 && !isIdentStart(c), j > 1 && !isIdentPart(c):
			return ""
		}
	}
	return ""
}

func isIdentStart(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func isIdentPart(c byte) bool { return isIdentStart(c) || '0' <= c && c <= '9' }

// DollarPlaceholder writes PostgreSQL's $n.
func DollarPlaceholder(n int) string { return "$" + strconv.Itoa(n) }

// QuestionPlaceholder writes SQLite's ?n.
func QuestionPlaceholder(n int) string { return "?" + strconv.Itoa(n) }

// slotRange bounds run numbers read as slot times in Unix seconds: cron and
// every schedules number runs so, while continuous and once runs carry
// coordinator numbers (0, -1, or microsecond-sized) far outside it.
const slotMin, slotMax = 946684800, 4102444800 // 2000-01-01, 2100-01-01

// SlotTime returns the time of the run's slot: for cron and every runs the
// slot's start (the run number in Unix seconds), otherwise when the lease
// was granted, or now outside a pool.
func SlotTime(lease runtime.Lease, now time.Time) time.Time {
	if IsSlot(lease.RunNumber) {
		return time.Unix(lease.RunNumber, 0).UTC()
	}
	if !lease.AcquiredAt.IsZero() {
		return lease.AcquiredAt.UTC()
	}
	return now.UTC()
}

// IsSlot reports whether a run number names a slot by its Unix seconds.
func IsSlot(runNumber int64) bool { return runNumber >= slotMin && runNumber < slotMax }

// Epoch is :last_slot_time before any slot completed, so that an
// incremental extract's first run reads everything.
var Epoch = time.Unix(0, 0).UTC()
