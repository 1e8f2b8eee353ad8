// Package slogdefault makes a logger slog's default for a while, as the
// worker entry points (worker.RunMain, agora run) do: the coordinator, the
// Redis client and the SQL sinks log through slog.Default().
package slogdefault

import (
	"log"
	"log/slog"
)

// Use makes logger slog's default (and so the log package's output) until
// the returned function is called. slog.SetDefault also points the log
// package at the new handler, which the default handler put back does not
// undo, so restore puts back the log package's own output and flags too.
func Use(logger *slog.Logger) (restore func()) {
	previous, out, flags := slog.Default(), log.Writer(), log.Flags()
	slog.SetDefault(logger)
	return func() {
		slog.SetDefault(previous)
		log.SetOutput(out)
		log.SetFlags(flags)
	}
}
