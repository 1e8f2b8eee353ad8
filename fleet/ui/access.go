package ui

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// sessionCookie carries a signed-in browser's session: an HMAC of the
// per-process secret, so it is worthless to another process and after a
// restart.
const sessionCookie = "agora_session"

// hostAllowed reports whether host (a Host header, with or without a port)
// names this dashboard: localhost, a loopback address, or one of allowed.
// Checking it keeps a DNS-rebinding page (its own name resolving to this
// machine) from reading the dashboard: the browser sends the page's name.
func hostAllowed(host string, allowed []string) bool {
	name := hostName(host)
	if name == "" {
		return false
	}
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return true
	}
	if ip := net.ParseIP(name); ip != nil && ip.IsLoopback() {
		return true
	}
	for _, a := range allowed {
		if strings.EqualFold(hostName(a), name) {
			return true
		}
	}
	return false
}

// hostName is host without its port and brackets, in lower case.
func hostName(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return strings.ToLower(strings.Trim(host, "[]"))
}

// client is who a request comes from, for counting token guesses: the
// peer's IP address (a proxy in front makes every user one client, which
// errs on the safe side).
func client(r *http.Request) string {
	if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return h
	}
	return r.RemoteAddr
}

// session is the session cookie's value.
func (h *Handler) session() string {
	mac := hmac.New(sha256.New, h.secret)
	mac.Write([]byte("agora fleet ui session"))
	return hex.EncodeToString(mac.Sum(nil))
}

// errWait is the answer to a client that must wait before its next token
// is compared.
var errWait = errors.New("too many wrong tokens")

// checkToken compares got with the token, counting a wrong one against
// r's client; a client still owing a delay is refused without comparing.
func (h *Handler) checkToken(w http.ResponseWriter, r *http.Request, got string) error {
	c := client(r)
	if d := h.guesses.wait(c); d > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int((d+time.Second-1)/time.Second)))
		return fmt.Errorf("%w from %s: try again in %s", errWait, c, d.Round(time.Second))
	}
	if !equal(got, h.opts.Token) {
		h.guesses.wrong(c)
		h.opts.Logger.Warn("fleet ui: wrong token", "client", c, "path", r.URL.Path)
		return fmt.Errorf("%w: wrong token", errForbidden)
	}
	h.guesses.right(c)
	return nil
}

// tokenStatus is the status of a refused token.
func tokenStatus(err error) int {
	if errors.Is(err, errWait) {
		return http.StatusTooManyRequests
	}
	return http.StatusForbidden
}

// signedIn reports whether r may read: always without a token; with one,
// a session cookie, or an Authorization: Bearer header with the token
// (for scripts reading /api/).
func (h *Handler) signedIn(w http.ResponseWriter, r *http.Request) (bool, error) {
	if h.opts.Token == "" {
		return true, nil
	}
	if c, err := r.Cookie(sessionCookie); err == nil && equal(c.Value, h.session()) {
		return true, nil
	}
	if auth := r.Header.Get("Authorization"); auth != "" {
		bearer, ok := strings.CutPrefix(auth, "Bearer ")
		if !ok {
			return false, errors.New("the Authorization header: want Bearer and the dashboard's token")
		}
		if err := h.checkToken(w, r, bearer); err != nil {
			return false, err
		}
		return true, nil
	}
	return false, nil
}

// guard answers what may not pass: a Host not allowed (421), or reading
// without signing in when a token is set (401 for /api/, the login page
// otherwise). It reports whether the request may go on.
func (h *Handler) guard(w http.ResponseWriter, r *http.Request) bool {
	if !hostAllowed(r.Host, h.opts.AllowedHosts) {
		h.opts.Logger.Warn("fleet ui: refused a request for another host", "host", r.Host, "client", client(r))
		http.Error(w, fmt.Sprintf("host %q is not this dashboard's: open it as localhost or a loopback address, or start it with --allowed-host %s", r.Host, hostName(r.Host)), http.StatusMisdirectedRequest)
		return false
	}
	p := r.URL.Path
	if strings.HasPrefix(p, "/static/") || p == "/login" {
		return true
	}
	ok, err := h.signedIn(w, r)
	switch {
	case ok:
		return true
	case strings.HasPrefix(p, "/api/"):
		w.Header().Set("WWW-Authenticate", `Bearer realm="agora fleet"`)
		status := http.StatusUnauthorized
		if err != nil {
			status = tokenStatus(err)
		} else {
			err = errors.New("this dashboard needs its token: send Authorization: Bearer TOKEN")
		}
		apiError(w, status, err)
	case err != nil:
		h.fail(w, tokenStatus(err), err)
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		h.fail(w, http.StatusForbidden, fmt.Errorf("%w: sign in first", errForbidden))
	default:
		http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
	}
	return false
}

// loginForm shows the sign-in form.
func (h *Handler) loginForm(w http.ResponseWriter, r *http.Request) {
	p := h.base(w, "sign in")
	p.Refresh, p.Next = false, localPath(r.URL.Query().Get("next"))
	if h.opts.Token == "" {
		http.Redirect(w, r, p.Next, http.StatusSeeOther)
		return
	}
	h.render(w, r, "login.html", http.StatusOK, p)
}

// login checks the token typed into the form and, when right, sets the
// session cookie and goes where the user was going.
func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	if h.opts.Token == "" {
		h.fail(w, http.StatusNotFound, errors.New("this dashboard has no token: nothing to sign in to"))
		return
	}
	if !h.checkTokenForm(w, r) {
		return
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: h.session(), Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, localPath(r.PostForm.Get("next")), http.StatusSeeOther)
}

// localPath is next when it is a path on this site, "/" otherwise, so the
// login cannot be made to send the browser elsewhere.
func localPath(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") {
		return "/"
	}
	return next
}

// checkTokenForm reads a posted form (at most 64 KB) and checks its CSRF
// field and its token, answering the request itself when one fails: the
// sign-in form and the actions' forms are checked alike.
func (h *Handler) checkTokenForm(w http.ResponseWriter, r *http.Request) bool {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		h.fail(w, http.StatusBadRequest, errors.New("unreadable form"))
		return false
	}
	if err := h.checkCSRF(r); err != nil {
		h.fail(w, http.StatusForbidden, err)
		return false
	}
	if err := h.checkToken(w, r, r.PostForm.Get("token")); err != nil {
		h.fail(w, tokenStatus(err), err)
		return false
	}
	return true
}
