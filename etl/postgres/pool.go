package postgres

import (
	"context"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"
)

// shared holds the pools opened for registered components, one per URL,
// kept for the life of the process: a config worker builds its components
// for every run, and a pool per run would reconnect every time.
var shared struct {
	mu    sync.Mutex
	pools map[string]*pgxpool.Pool
}

// sharedPool returns the process's pool for url. Errors never include the
// URL, which may hold a password.
func sharedPool(ctx context.Context, url string) (*pgxpool.Pool, error) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if p := shared.pools[url]; p != nil {
		return p, nil
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgx's parse errors already hide the password.
		return nil, fmt.Errorf("postgres: url: %w", err)
	}
	p, err := pgxpool.NewWithConfig(context.WithoutCancel(ctx), cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: connect to %s: %w", cfg.ConnConfig.Host, err)
	}
	if shared.pools == nil {
		shared.pools = map[string]*pgxpool.Pool{}
	}
	shared.pools[url] = p
	return p, nil
}
