package ui

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agora-etl/agora/internal/humanize"
	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/distributed"
	"github.com/agora-etl/agora/runtime/history"
)

// DefaultListen is where Serve (and "fleet ui") listens unless told
// otherwise: loopback only, so the dashboard is not on the network by
// accident.
const DefaultListen = "127.0.0.1:8090"

// TokenEnv names the variable the token is read from when neither --token
// nor --token-file is given.
const TokenEnv = "AGORA_UI_TOKEN"

// csrfCookie carries the CSRF token the forms must repeat.
const csrfCookie = "agora_csrf"

// Page sizes: the front page's pipelines, a pipeline's runs, the fleet's
// runs; and /api/'s default limit (MaxAPILimit at most).
const (
	FrontPageSize   = 50
	RunsPageSize    = 25
	DefaultAPILimit = 100
	MaxAPILimit     = distributed.MaxPageSize
)

// errorShown is how much of an error a table cell shows; the whole text
// is on the run's line in /api/runs.
const errorShown = 300

//go:embed assets
var assets embed.FS

var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"when":     when,
	"ago":      ago,
	"duration": humanize.RunDuration,
	"join":     strings.Join,
	"pathID":   url.PathEscape,
	"short":    short,
	"params":   runtime.FormatParams,
	"add":      func(a, b int) int { return a + b },
}).ParseFS(assets, "assets/*.html"))

// Options configure a dashboard Handler.
type Options struct {
	// Token enables the actions and, when set, is needed to read too
	// (signing in sets a cookie; scripts send Authorization: Bearer);
	// empty: the dashboard is read-only and open.
	Token string
	// AllowedHosts are the names (or addresses) the dashboard answers to
	// in the Host header besides localhost and loopback addresses; any
	// other Host is refused (421), which defeats DNS rebinding.
	AllowedHosts []string
	// SummaryTTL is how long the front page's summaries are reused
	// (default DefaultSummaryTTL).
	SummaryTTL time.Duration
	// Now is the clock of the times shown and of the token guess limit
	// (default time.Now); next runs come from the Inspector's clock.
	Now func() time.Time
	// Logger receives request failures and refused requests (default:
	// discarded).
	Logger *slog.Logger
}

// Handler serves the dashboard.
type Handler struct {
	in      *distributed.Inspector
	opts    Options
	secret  []byte // per process: signs the CSRF token and the session
	csrf    string
	mux     *http.ServeMux
	guesses *guesses
	sums    *summaries
	// search admits one fleet-wide run search at a time: it reads every
	// run kept of every pipeline, so concurrent ones would only add up.
	search chan struct{}
}

// NewHandler returns the dashboard over in. Besides the pages it serves
// the Inspector's results as JSON: GET /api/workers, /api/leases,
// /api/pipelines (a distributed.PipelinePage), /api/runs (a
// distributed.RunPage) and /api/audit (distributed.AuditEntry values); see
// api.go for their parameters.
func NewHandler(in *distributed.Inspector, opts Options) *Handler {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.SummaryTTL <= 0 {
		opts.SummaryTTL = DefaultSummaryTTL
	}
	secret := make([]byte, 32)
	_, _ = rand.Read(secret) // never fails (crypto/rand)
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte("agora fleet ui csrf"))
	h := &Handler{in: in, opts: opts, secret: secret, csrf: hex.EncodeToString(mac.Sum(nil)), mux: http.NewServeMux(),
		guesses: newGuesses(opts.Now), sums: &summaries{in: in, ttl: opts.SummaryTTL, now: opts.Now},
		search: make(chan struct{}, 1)}
	static, _ := fs.Sub(assets, "assets")
	h.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	h.mux.HandleFunc("GET /{$}", h.front)
	h.mux.HandleFunc("GET /runs", h.runs)
	h.mux.HandleFunc("GET /audit", h.audit)
	h.mux.HandleFunc("GET /login", h.loginForm)
	h.mux.HandleFunc("POST /login", h.login)
	h.mux.HandleFunc("GET /pipelines/{id}", h.pipeline)
	h.mux.HandleFunc("POST /pipelines/{id}/{action}", h.act)
	h.mux.HandleFunc("GET /api/{what}", h.api)
	return h
}

// ServeHTTP adds the security headers every answer carries, then refuses
// a Host not allowed and, with a token, a reader not signed in.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cache-Control", "no-store")
	if !h.guard(w, r) {
		return
	}
	h.mux.ServeHTTP(w, r)
}

// page is what every template gets.
type page struct {
	Title    string
	ReadOnly bool
	CSRF     string
	Notice   string
	Error    string
	Now      time.Time
	Refresh  bool
	ETag     string
	Next     string // where the login goes

	Filter   filterView
	Outcomes []string
	Total    int
	First    int // the 1-based index of the page's first row
	PrevURL  string
	NextURL  string

	Pipelines []distributed.PipelineInfo
	Workers   []workerView

	Pipeline *distributed.PipelineInfo
	// Backfill is the pipeline's running or last backfill, if any.
	Backfill *distributed.BackfillProgress
	Audit    []distributed.AuditEntry
	Runs     []history.Record
	Stale    []history.Record
	Chart    template.HTML
	Kept     int // runs in the pipeline's history
}

// workerView is a live worker as the front page shows it.
type workerView struct {
	distributed.WorkerInfo
	Held int
}

func (h *Handler) base(w http.ResponseWriter, title string) page {
	// The cookie the forms' hidden field must match; SameSite=Strict keeps
	// other sites' forms from sending it.
	http.SetCookie(w, &http.Cookie{Name: csrfCookie, Value: h.csrf, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	return page{Title: title, ReadOnly: h.opts.Token == "", CSRF: h.csrf, Now: h.opts.Now(), Refresh: true, ETag: etagPlaceholder, Outcomes: outcomes}
}

func (h *Handler) render(w http.ResponseWriter, r *http.Request, name string, status int, p page) {
	var b strings.Builder
	if err := pages.ExecuteTemplate(&b, name, p); err != nil {
		h.opts.Logger.Error("fleet ui: rendering failed", "page", name, "error", err)
		http.Error(w, "rendering failed", http.StatusInternalServerError)
		return
	}
	body := b.String()
	if status == http.StatusOK && r != nil && r.Method == http.MethodGet {
		var notModified bool
		if body, notModified = conditional(w, r, body); notModified {
			return
		}
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// fail shows err on a page of its own.
func (h *Handler) fail(w http.ResponseWriter, status int, err error) {
	p := h.base(w, "error")
	p.Error, p.Refresh = err.Error(), false
	h.render(w, nil, "error.html", status, p)
}

// front lists a page of the pipelines that pass the filter, from the
// summaries (shared by every reader for SummaryTTL), and the live
// workers.
func (h *Handler) front(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f, err := pipelineFilter(q)
	if err != nil {
		h.fail(w, http.StatusBadRequest, err)
		return
	}
	n, err := intParam(q, "page", 1, 1, 1_000_000)
	if err != nil {
		h.fail(w, http.StatusBadRequest, err)
		return
	}
	o, at, err := h.sums.get(r.Context())
	if err != nil {
		h.opts.Logger.Error("fleet ui: reading the fleet failed", "error", err)
		h.fail(w, http.StatusBadGateway, fmt.Errorf("reading the fleet: %w", err))
		return
	}
	pg, _ := o.Page(f, (n-1)*FrontPageSize, FrontPageSize) // the size is in range
	p := h.base(w, "fleet")
	p.Now = at
	p.Filter, p.Pipelines, p.Total, p.First = readFilterView(q), pg.Pipelines, pg.Total, pg.Offset+1
	if n > 1 {
		p.PrevURL = withParam(r.URL, "page", strconv.Itoa(n-1))
	}
	if pg.Offset+len(pg.Pipelines) < pg.Total {
		p.NextURL = withParam(r.URL, "page", strconv.Itoa(n+1))
	}
	held := map[string]int{}
	for _, row := range o.Pipelines {
		if row.Lease.Held {
			held[row.Lease.Holder]++
		}
	}
	for _, wk := range o.Workers {
		p.Workers = append(p.Workers, workerView{WorkerInfo: wk, Held: held[wk.ID]})
	}
	p.Notice = notice(r)
	h.render(w, r, "index.html", http.StatusOK, p)
}

// pipeline shows one pipeline, reading its keys only: its facts, a chart
// of its runs and a page of its runs that pass the filter.
func (h *Handler) pipeline(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	q := r.URL.Query()
	f, err := runFilter(q)
	if err != nil {
		h.fail(w, http.StatusBadRequest, err)
		return
	}
	n, err := intParam(q, "page", 1, 1, 1_000_000)
	if err != nil {
		h.fail(w, http.StatusBadRequest, err)
		return
	}
	// The workers come with the summaries (SummaryTTL old at most): they
	// change slowly, and scanning the registry per page would not.
	var info distributed.PipelineInfo
	var runs []history.Record
	var found bool
	o, _, err := h.sums.get(r.Context())
	if err == nil {
		info, runs, found, err = h.in.PipelineAmong(r.Context(), id, o.Workers)
	}
	if err != nil {
		h.opts.Logger.Error("fleet ui: reading a pipeline failed", "pipeline", id, "error", err)
		h.fail(w, http.StatusBadGateway, fmt.Errorf("reading the fleet: %w", err))
		return
	}
	if !found {
		h.fail(w, http.StatusNotFound, fmt.Errorf("unknown pipeline %q: no live worker runs it, it is not paused and it has no run history", id))
		return
	}
	p := h.base(w, id)
	p.Pipeline, p.Kept, p.Chart, p.Filter = &info, len(runs), durationChart(runs), readFilterView(q)
	if bf, err := h.in.Backfill(r.Context(), id); err == nil {
		p.Backfill = &bf
	} else if !errors.Is(err, distributed.ErrNoBackfill) {
		// The rest of the page is still worth showing.
		h.opts.Logger.Warn("fleet ui: reading a backfill failed", "pipeline", id, "error", err)
	}
	var kept []history.Record
	for _, run := range runs {
		if run.Outcome == history.OutcomeStale {
			p.Stale = append(p.Stale, run)
		}
		if f.Keep(run) {
			kept = append(kept, run)
		}
	}
	from := min((n-1)*RunsPageSize, len(kept))
	p.Runs, p.Total, p.First = kept[from:min(from+RunsPageSize, len(kept))], len(kept), from+1
	if n > 1 {
		p.PrevURL = withParam(r.URL, "page", strconv.Itoa(n-1))
	}
	if from+RunsPageSize < len(kept) {
		p.NextURL = withParam(r.URL, "page", strconv.Itoa(n+1))
	}
	p.Notice = notice(r)
	h.render(w, r, "pipeline.html", http.StatusOK, p)
}

// runs lists a page of the fleet's runs that pass the filter, newest
// first; the filter runs on the server (Inspector.RunPage) and the pages
// follow a cursor.
func (h *Handler) runs(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f, err := runFilter(q)
	if err != nil {
		h.fail(w, http.StatusBadRequest, err)
		return
	}
	rp, err := h.runPage(r.Context(), distributed.RunPageQuery{RunFilter: f, Limit: RunsPageSize, Cursor: q.Get("cursor")})
	if errors.Is(err, distributed.ErrBadQuery) {
		h.fail(w, http.StatusBadRequest, err)
		return
	}
	if err != nil {
		h.opts.Logger.Error("fleet ui: reading the run history failed", "error", err)
		h.fail(w, http.StatusBadGateway, fmt.Errorf("reading the run history: %w", err))
		return
	}
	p := h.base(w, "runs")
	p.Filter, p.Runs, p.Total = readFilterView(q), rp.Runs, rp.Total
	if q.Get("cursor") != "" {
		p.PrevURL = withParam(r.URL, "cursor", "")
	}
	if rp.Next != "" {
		p.NextURL = withParam(r.URL, "cursor", rp.Next)
	}
	h.render(w, r, "runs.html", http.StatusOK, p)
}

// AuditPageSize is how many audit entries the /audit page shows.
const AuditPageSize = 100

// audit lists the audit log, newest first: every pipeline's, or the one
// named by ?pipeline=.
func (h *Handler) audit(w http.ResponseWriter, r *http.Request) {
	var q distributed.AuditQuery
	id := strings.TrimSpace(r.URL.Query().Get("pipeline"))
	if id != "" {
		q.PipelineIDs = []string{id}
	}
	q.Limit = AuditPageSize
	entries, err := h.in.Audit(r.Context(), q)
	if err != nil {
		h.opts.Logger.Error("fleet ui: reading the audit log failed", "error", err)
		h.fail(w, http.StatusBadGateway, fmt.Errorf("reading the audit log: %w", err))
		return
	}
	p := h.base(w, "audit")
	p.Audit, p.Filter.Pipeline = entries, id
	h.render(w, r, "audit.html", http.StatusOK, p)
}

// runPage is Inspector.RunPage, one fleet-wide search at a time.
func (h *Handler) runPage(ctx context.Context, q distributed.RunPageQuery) (distributed.RunPage, error) {
	if len(q.PipelineIDs) == 0 {
		select {
		case h.search <- struct{}{}:
			defer func() { <-h.search }()
		case <-ctx.Done():
			return distributed.RunPage{}, ctx.Err()
		}
	}
	return h.in.RunPage(ctx, q)
}

// short cuts an error to errorShown bytes (at a rune boundary) and says
// so.
func short(s string) string {
	if len(s) <= errorShown {
		return s
	}
	cut := errorShown
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes in all; /api/runs has the whole text)", s[:cut], len(s))
}

// notice is the message a redirect after an action carries.
func notice(r *http.Request) string {
	switch r.URL.Query().Get("done") {
	case "pause":
		return "Paused: every replica skips its scheduled runs from its next poll; a run in flight finishes."
	case "resume":
		return "Resumed: the next scheduled run goes ahead."
	case "trigger":
		return "Triggered: one replica runs it shortly, under its own lease."
	case "backfill":
		return "Backfill started: the replicas run its slots oldest first; its progress is below."
	case "backfill-cancel":
		return "Backfill cancelled: no slot is handed out any more; the slots in flight finish."
	}
	return ""
}

// errForbidden is the answer to an action without the right tokens.
var errForbidden = errors.New("forbidden")

func (h *Handler) act(w http.ResponseWriter, r *http.Request) {
	id, action := r.PathValue("id"), r.PathValue("action")
	switch action {
	case "pause", "resume", "trigger", "backfill", "backfill-cancel":
	default:
		h.fail(w, http.StatusNotFound, fmt.Errorf("unknown action %q", action))
		return
	}
	if h.opts.Token == "" {
		h.fail(w, http.StatusForbidden, errors.New("this dashboard is read-only: it was started without --token, --token-file or "+TokenEnv))
		return
	}
	if !h.checkTokenForm(w, r) {
		return
	}
	ctx := r.Context()
	// The audit log names the caller by address: the dashboard has one
	// token, not users, so the address is what tells two callers apart.
	actor := "fleet ui " + callerAddr(r)
	opts := []distributed.ControlOption{distributed.WithActor(actor)}
	if reason := strings.TrimSpace(r.PostForm.Get("reason")); reason != "" {
		opts = append(opts, distributed.WithReason(reason))
	}
	if action == "trigger" {
		params, err := formParams(r.PostForm.Get("params"))
		if err != nil {
			h.fail(w, http.StatusBadRequest, fmt.Errorf("trigger %s: %s", id, strings.TrimPrefix(err.Error(), "runtime: ")))
			return
		}
		if len(params) > 0 {
			opts = append(opts, distributed.WithParams(params))
		}
	}
	var err error
	switch action {
	case "backfill":
		var req distributed.BackfillRequest
		if req, err = h.backfillForm(r, id); err != nil {
			h.fail(w, http.StatusBadRequest, fmt.Errorf("backfill %s: %w", id, err))
			return
		}
		req.Actor = actor
		_, err = h.in.StartBackfill(ctx, req)
	case "backfill-cancel":
		_, err = h.in.CancelBackfill(ctx, id, opts...)
	case "pause":
		_, err = h.in.Pause(ctx, id, actor, opts...)
	case "resume":
		_, err = h.in.Resume(ctx, id, opts...)
	case "trigger":
		_, err = h.in.Trigger(ctx, id, opts...)
	}
	if err != nil {
		status := http.StatusBadGateway
		switch {
		case errors.Is(err, distributed.ErrUnknownPipeline) || errors.Is(err, distributed.ErrPipelinePaused) ||
			errors.Is(err, distributed.ErrTriggerPending) || errors.Is(err, distributed.ErrBackfillRunning):
			status = http.StatusConflict
		case errors.Is(err, distributed.ErrInvalidControl) || errors.Is(err, distributed.ErrInvalidBackfill):
			status = http.StatusBadRequest // a reason over MaxReasonBytes
		}
		h.fail(w, status, fmt.Errorf("%s %s: %s", action, id, strings.TrimPrefix(err.Error(), "distributed: ")))
		return
	}
	h.opts.Logger.Info("fleet ui: action", "action", action, "pipeline", id, "actor", actor)
	http.Redirect(w, r, "/pipelines/"+url.PathEscape(id)+"?done="+action, http.StatusSeeOther)
}

// callerAddr is the host part of r's remote address (the whole address
// when it has no port).
func callerAddr(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// checkCSRF requires the form's csrf field and the cookie to both be this
// process's CSRF token, and a same-origin request where the browser says.
func (h *Handler) checkCSRF(r *http.Request) error {
	if origin := r.Header.Get("Origin"); origin != "" && origin != "null" {
		u, err := url.Parse(origin)
		if err != nil || u.Host != r.Host {
			return fmt.Errorf("%w: cross-origin request from %q", errForbidden, origin)
		}
	}
	c, err := r.Cookie(csrfCookie)
	if err != nil || !equal(c.Value, h.csrf) || !equal(r.PostForm.Get("csrf"), h.csrf) {
		return fmt.Errorf("%w: missing or stale CSRF token; reload the page and try again", errForbidden)
	}
	return nil
}

// equal compares secrets in constant time.
func equal(got, want string) bool {
	return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

func when(t *time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

func ago(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	return d.Round(time.Second).String()
}
