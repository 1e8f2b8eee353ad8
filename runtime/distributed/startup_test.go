package distributed

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/internal/redistest"
	"github.com/agora-etl/agora/runtime"
)

// withDefaultLogger points slog.Default at a buffer for the test.
func withDefaultLogger(t *testing.T) *logBuffer {
	t.Helper()
	buf := &logBuffer{}
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(buf, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })
	return buf
}

func TestStartUpLogNamesTheModeAndMisspeltSettings(t *testing.T) {
	logs := withDefaultLogger(t)
	t.Setenv(envNames.RedisURL, "")
	t.Setenv("AGORA_REDIS_URL", "redis://:hunter2@127.0.0.1:1/0")
	t.Setenv("AGORA_LEASE_TTL", "30")
	opt, err := CoordinatorFromEnv(ModeAuto)
	if err != nil {
		t.Fatal(err)
	}
	// The warning comes when a long-running pool starts.
	pool := runtime.NewWorkerPool(opt, runtime.WithLogger(slog.Default()), runtime.WithSignalHandling(false)).
		Register(&runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.Once(), Factory: func(context.Context) (runtime.Pipeline, error) {
			return runtime.PipelineFunc(func(context.Context) error { return nil }), nil
		}})
	if err := pool.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	out := logs.String()
	for _, want := range []string{"level=WARN", envNames.RedisURL + " is not set", "every one of them runs every slot",
		"AGORA_LEASE_TTL", "AGORA_REDIS_URL"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "hunter2") {
		t.Fatalf("a variable's value was logged:\n%s", out)
	}

	// The mode line also waits for the long-running pool: building one (as
	// the pipelines subcommand does) prints nothing.
	srv := redistest.Start(t, redistest.WithPassword("hunter2"))
	logs2 := withDefaultLogger(t)
	t.Setenv(envNames.RedisURL, srv.URL())
	redisOpt, err := CoordinatorFromEnv(ModeAuto)
	if err != nil || redisOpt == nil {
		t.Fatal(err)
	}
	logs3 := withDefaultLogger(t)
	offOpt, err := CoordinatorFromEnv(ModeOff)
	if err != nil {
		t.Fatal(err)
	}
	if out := logs2.String() + logs3.String(); out != "" {
		t.Fatalf("building the option logged:\n%s", out)
	}
	for _, c := range []struct {
		opt  runtime.PoolOption
		logs *logBuffer
		want string
	}{
		{redisOpt, logs2, "coordinator: Redis"},
		{offOpt, logs3, "in-process leases (distributed=off)"},
	} {
		pool := runtime.NewWorkerPool(c.opt, runtime.WithLogger(slog.New(slog.NewTextHandler(c.logs, nil))), runtime.WithSignalHandling(false)).
			Register(&runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.Once(), Factory: func(context.Context) (runtime.Pipeline, error) {
				return runtime.PipelineFunc(func(context.Context) error { return nil }), nil
			}})
		if err := pool.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if out := c.logs.String(); !strings.Contains(out, c.want) || strings.Contains(out, "hunter2") {
			t.Fatalf("mode line:\n%s", out)
		}
	}
	if !strings.Contains(logs2.String(), srv.Addr()) {
		t.Errorf("the Redis mode line does not name the server:\n%s", logs2)
	}
}

func TestStartFailsOnRefusedCredentialsAndDatabase(t *testing.T) {
	srv := redistest.Start(t, redistest.WithPassword("s3cret"))
	admin := newRedisClient(t, srv.URL())
	if err := admin.Do(ctx, "ACL", "SETUSER", "pinger", "on", ">pw", "~*", "+ping").Err(); err != nil {
		t.Fatal(err)
	}
	host := srv.Addr()
	for _, c := range []struct{ name, url, want string }{
		{"no password", "redis://" + host + "/0", "NOAUTH"},
		{"wrong password", "redis://:wrong@" + host + "/0", "WRONGPASS"},
		{"no such database", strings.Replace(srv.URL(), "/0", "/99", 1), "DB index is out of range"},
		{"missing permission", "redis://pinger:pw@" + host + "/0", "NOPERM"},
	} {
		t.Run(c.name, func(t *testing.T) {
			coord, err := NewRedisWorkerCoordinator(Options{RedisURL: c.url, Logger: slog.New(slog.NewTextHandler(&logBuffer{}, nil))})
			if err != nil {
				t.Fatal(err)
			}
			defer coord.Close()
			start := time.Now()
			err = coord.Start(ctx, "w", []string{"p"})
			if !errors.Is(err, ErrRedisRefused) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Start = %v, want ErrRedisRefused with %s", err, c.want)
			}
			if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), ":wrong@") {
				t.Fatalf("the error shows a password: %v", err)
			}
			if took := time.Since(start); took > 2*time.Second {
				t.Fatalf("Start took %s to fail", took)
			}
			// Not started: a later Start may try again with the same settings.
			if ok, err := coord.TryAcquireLease(ctx, "p", slotRun(1)); ok || !errors.Is(err, ErrNotStarted) {
				t.Fatalf("TryAcquireLease after a refused Start = %v, %v", ok, err)
			}
		})
	}

	// Through a pool built from the environment, as a generated worker's:
	// Run fails at once, with a clear message that does not show the
	// password.
	t.Setenv(envNames.RedisURL, "redis://:wrong@"+host+"/0")
	opt, err := CoordinatorFromEnv(ModeAuto)
	if err != nil {
		t.Fatal(err)
	}
	err = runtime.NewWorkerPool(opt, runtime.WithSignalHandling(false)).
		Register(&runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.Every(time.Hour),
			Factory: func(context.Context) (runtime.Pipeline, error) {
				return runtime.PipelineFunc(func(context.Context) error { return nil }), nil
			}}).Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "user name or password in the URL is wrong") || strings.Contains(err.Error(), ":wrong@") {
		t.Fatalf("Run = %v", err)
	}
}

// newRedisClient returns a plain client on url, closed with the test.
func newRedisClient(t *testing.T, url string) *redis.Client {
	t.Helper()
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opts)
	t.Cleanup(func() { _ = c.Close() })
	return c
}
