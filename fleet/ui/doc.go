// Package ui is the fleet's web dashboard, served by "agora fleet ui" and
// "./worker fleet ui" over the same distributed.Inspector as the other
// fleet commands; the fleet package calls Serve. Its /api/ pages answer
// the Inspector's results as JSON, the shape "fleet ... --json" prints.
//
// The pages are rendered on the server with html/template from templates
// embedded in the binary; they work without JavaScript, and a small script
// reloads them every few seconds. The front page lists every pipeline
// (schedule, next run, last outcome, paused, holder) and the live workers
// (version, uptime, pipelines held); a pipeline's page shows its lease,
// fencing token, run history with errors, and the runs refused as stale.
//
// Pause, resume and trigger are POST forms. They need the dashboard's
// token (Options.Token, from --token or AGORA_UI_TOKEN), typed into the
// form; without a token the dashboard is read-only and says so. Every form
// also carries a CSRF token derived from a per-process random secret, which
// must match the SameSite=Strict cookie set with the page; both tokens are
// compared in constant time. The dashboard listens on loopback unless told
// otherwise, and shows no Redis URL or password: error texts in the
// history were redacted when recorded.
package ui
