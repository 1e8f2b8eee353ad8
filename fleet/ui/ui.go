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
	"os"
	"strings"
	"time"

	"github.com/agora-etl/agora/internal/humanize"
	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/distributed"
)

// DefaultListen is where Serve (and "fleet ui") listens unless told
// otherwise: loopback only, so the dashboard is not on the network by
// accident.
const DefaultListen = "127.0.0.1:8090"

// TokenEnv names the variable the token is read from when --token is not
// given.
const TokenEnv = "AGORA_UI_TOKEN"

// csrfCookie carries the CSRF token the forms must repeat.
const csrfCookie = "agora_csrf"

//go:embed assets
var assets embed.FS

var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"when":     when,
	"ago":      ago,
	"duration": humanize.RunDuration,
	"join":     strings.Join,
	"pathID":   url.PathEscape,
}).ParseFS(assets, "assets/*.html"))

// Options configure a dashboard Handler.
type Options struct {
	// Token enables the actions; empty: the dashboard is read-only.
	Token string
	// Now is the clock of the uptimes and ages shown (default time.Now);
	// next runs come from the Inspector's clock.
	Now func() time.Time
	// Logger receives request failures (default: discarded).
	Logger *slog.Logger
}

// Handler serves the dashboard.
type Handler struct {
	in   *distributed.Inspector
	opts Options
	csrf string // derived from a per-process random secret
	mux  *http.ServeMux
}

// NewHandler returns the dashboard over in. Besides the pages it serves
// the Inspector's results as JSON, in the shape "fleet ... --json" prints:
// GET /api/workers, /api/leases, /api/pipelines and /api/runs
// (?pipeline=ID, repeatable; ?limit=N, default HistoryShown; ?failed=1).
func NewHandler(in *distributed.Inspector, opts Options) *Handler {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	secret := make([]byte, 32)
	_, _ = rand.Read(secret) // never fails (crypto/rand)
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte("agora fleet ui csrf"))
	h := &Handler{in: in, opts: opts, csrf: hex.EncodeToString(mac.Sum(nil)), mux: http.NewServeMux()}
	static, _ := fs.Sub(assets, "assets")
	h.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	h.mux.HandleFunc("GET /{$}", h.front)
	h.mux.HandleFunc("GET /pipelines/{id}", h.pipeline)
	h.mux.HandleFunc("POST /pipelines/{id}/{action}", h.act)
	h.mux.HandleFunc("GET /api/{what}", h.api)
	return h
}

// ServeHTTP adds the security headers every answer carries.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cache-Control", "no-store")
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

	Pipelines []distributed.PipelineInfo
	Workers   []workerView

	Pipeline *distributed.PipelineInfo
	Runs     []runtime.RunRecord
	Stale    []runtime.RunRecord
}

// workerView is a live worker as the front page shows it.
type workerView struct {
	distributed.WorkerInfo
	Uptime time.Duration
	Held   []string
}

func (h *Handler) base(w http.ResponseWriter, title string) page {
	// The cookie the forms' hidden field must match; SameSite=Strict keeps
	// other sites' forms from sending it.
	http.SetCookie(w, &http.Cookie{Name: csrfCookie, Value: h.csrf, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	return page{Title: title, ReadOnly: h.opts.Token == "", CSRF: h.csrf, Now: h.opts.Now(), Refresh: true}
}

func (h *Handler) render(w http.ResponseWriter, name string, status int, p page) {
	var b strings.Builder
	if err := pages.ExecuteTemplate(&b, name, p); err != nil {
		h.opts.Logger.Error("fleet ui: rendering failed", "page", name, "error", err)
		http.Error(w, "rendering failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, b.String())
}

// fail shows err on a page of its own.
func (h *Handler) fail(w http.ResponseWriter, status int, err error) {
	p := h.base(w, "error")
	p.Error, p.Refresh = err.Error(), false
	h.render(w, "error.html", status, p)
}

func (h *Handler) front(w http.ResponseWriter, r *http.Request) {
	o, err := h.in.Overview(r.Context())
	if err != nil {
		h.fail(w, http.StatusBadGateway, fmt.Errorf("reading the fleet: %w", err))
		return
	}
	rows, ws := o.Pipelines, o.Workers
	p := h.base(w, "fleet")
	p.Pipelines = rows
	held := map[string][]string{}
	for _, row := range rows {
		if row.Lease.Held {
			held[row.Lease.Holder] = append(held[row.Lease.Holder], row.PipelineID)
		}
	}
	for _, wk := range ws {
		p.Workers = append(p.Workers, workerView{WorkerInfo: wk, Uptime: p.Now.Sub(wk.StartedAt), Held: held[wk.ID]})
	}
	p.Notice = notice(r)
	h.render(w, "index.html", http.StatusOK, p)
}

// HistoryShown is how many runs a pipeline's page lists.
const HistoryShown = 100

func (h *Handler) pipeline(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	rows, err := h.in.Pipelines(r.Context())
	if err != nil {
		h.fail(w, http.StatusBadGateway, fmt.Errorf("reading the fleet: %w", err))
		return
	}
	var row *distributed.PipelineInfo
	for i := range rows {
		if rows[i].PipelineID == id {
			row = &rows[i]
		}
	}
	runs, err := h.in.Runs(r.Context(), distributed.RunQuery{PipelineIDs: []string{id}, Limit: HistoryShown})
	if err != nil {
		h.fail(w, http.StatusBadGateway, fmt.Errorf("reading the run history: %w", err))
		return
	}
	if row == nil {
		if len(runs) == 0 {
			h.fail(w, http.StatusNotFound, fmt.Errorf("unknown pipeline %q: no live worker runs it and it has no run history", id))
			return
		}
		row = &distributed.PipelineInfo{PipelineID: id, Workers: []string{}}
	}
	p := h.base(w, id)
	p.Pipeline, p.Runs = row, runs
	for _, run := range runs {
		if run.Outcome == runtime.OutcomeStale {
			p.Stale = append(p.Stale, run)
		}
	}
	p.Notice = notice(r)
	h.render(w, "pipeline.html", http.StatusOK, p)
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
	}
	return ""
}

// errForbidden is the answer to an action without the right tokens.
var errForbidden = errors.New("forbidden")

func (h *Handler) act(w http.ResponseWriter, r *http.Request) {
	id, action := r.PathValue("id"), r.PathValue("action")
	if action != "pause" && action != "resume" && action != "trigger" {
		h.fail(w, http.StatusNotFound, fmt.Errorf("unknown action %q", action))
		return
	}
	if h.opts.Token == "" {
		h.fail(w, http.StatusForbidden, errors.New("this dashboard is read-only: it was started without --token or "+TokenEnv))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		h.fail(w, http.StatusBadRequest, errors.New("unreadable form"))
		return
	}
	if err := h.checkCSRF(r); err != nil {
		h.fail(w, http.StatusForbidden, err)
		return
	}
	if !equal(r.PostForm.Get("token"), h.opts.Token) {
		h.fail(w, http.StatusForbidden, fmt.Errorf("%w: wrong token", errForbidden))
		return
	}
	ctx := r.Context()
	var err error
	switch action {
	case "pause":
		_, err = h.in.Pause(ctx, id, "fleet ui")
	case "resume":
		_, err = h.in.Resume(ctx, id)
	case "trigger":
		_, err = h.in.Trigger(ctx, id)
	}
	if err != nil {
		status := http.StatusBadGateway
		if errors.Is(err, distributed.ErrUnknownPipeline) || errors.Is(err, distributed.ErrPipelinePaused) {
			status = http.StatusConflict
		}
		h.fail(w, status, fmt.Errorf("%s %s: %s", action, id, strings.TrimPrefix(err.Error(), "distributed: ")))
		return
	}
	h.opts.Logger.Info("fleet ui: action", "action", action, "pipeline", id)
	http.Redirect(w, r, "/pipelines/"+url.PathEscape(id)+"?done="+action, http.StatusSeeOther)
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

// ServeOptions configure Serve.
type ServeOptions struct {
	// Listen is the address (default DefaultListen).
	Listen string
	// Token enables the pause, resume and trigger actions; empty: read
	// from AGORA_UI_TOKEN, and when that is empty too the dashboard is
	// read-only.
	Token string
}

// Serve listens on opts.Listen and serves the dashboard over in until ctx
// ends. It is what "fleet ui" runs.
func Serve(ctx context.Context, in *distributed.Inspector, opts ServeOptions, stdout, stderr io.Writer) error {
	addr := opts.Listen
	if addr == "" {
		addr = DefaultListen
	}
	token := opts.Token
	if token == "" {
		token = os.Getenv(TokenEnv)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	h := NewHandler(in, Options{Token: token, Logger: slog.New(slog.NewTextHandler(stderr, nil))})
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	mode := "read-only (no --token or " + TokenEnv + ")"
	if token != "" {
		mode = "pause, resume and trigger enabled with the token"
	}
	fmt.Fprintf(stdout, "fleet dashboard on http://%s/ — %s\n", ln.Addr(), mode)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
		shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return srv.Shutdown(shutCtx)
	case err := <-done:
		return err
	}
}
