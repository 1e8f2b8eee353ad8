// Package ui is the fleet's web dashboard, served by "agora fleet ui" and
// "./worker fleet ui" over the same distributed.Inspector as the other
// fleet commands; the fleet package calls Serve. Its /api/ pages answer
// the Inspector's results as JSON, a page at a time.
//
// The pages are rendered on the server with html/template from templates
// embedded in the binary and work without JavaScript. They hold at a
// thousand pipelines: the front page pages and filters the fleet's
// summaries (each pipeline's lease and newest run, read in batches and
// shared by every reader for Options.SummaryTTL); a pipeline's page reads
// that pipeline only and charts its runs in inline SVG; the fleet's runs
// are searched on the server (distributed.Inspector.RunPage). A small
// script asks for a visible page again every few seconds with its ETag and
// reloads it only when it changed.
//
// With a token (Options.Token, from --token, --token-file or
// AGORA_UI_TOKEN) reading needs it too: a login form sets a session
// cookie, and scripts send it as a bearer token; without one the dashboard
// is read-only and open. Wrong tokens are delayed per client, more with
// each. Pause, resume and trigger are POST forms that need the token typed
// again and a CSRF token derived from a per-process random secret, which
// must match the SameSite=Strict cookie set with the page; secrets are
// compared in constant time. Requests for a Host other than localhost, a
// loopback address, the listen address or Options.AllowedHosts are refused
// (DNS rebinding). Serve bounds every connection with timeouts and caps
// their number, listens on loopback unless told otherwise, and warns when
// it does not. No Redis URL or password is shown: error texts in the
// history were redacted when recorded.
package ui
