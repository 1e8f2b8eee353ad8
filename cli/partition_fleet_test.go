package cli_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agora-etl/agora/internal/pgtest"
	"github.com/agora-etl/agora/internal/redistest"
)

// A silent network partition between one replica and Redis while its run
// is in flight: the replica reaches Redis through a TCP proxy that, when
// cut, stops forwarding in both directions without closing anything (no
// RST, no FIN: what a dropped link or a firewall that drops packets looks
// like), and forwards what was held back once healed. Its lease expires
// in Redis while it runs; the other replicas take the following slots.
// Each slot has one row, and the rows' tokens rise in the order they were
// committed: the partitioned run cannot commit under its stale token.

// silentProxy forwards TCP connections to target until cut.
type silentProxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	cond  *sync.Cond
	cut   bool
	conns []net.Conn
}

// startSilentProxy listens on a free 127.0.0.1 port; it is closed when the
// test ends.
func startSilentProxy(t *testing.T, target string) *silentProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &silentProxy{ln: ln, target: target}
	p.cond = sync.NewCond(&p.mu)
	go p.serve()
	t.Cleanup(p.close)
	return p
}

// addr is where clients connect.
func (p *silentProxy) addr() string { return p.ln.Addr().String() }

// setCut starts (true) or ends (false) the partition.
func (p *silentProxy) setCut(cut bool) {
	p.mu.Lock()
	p.cut = cut
	p.mu.Unlock()
	p.cond.Broadcast()
}

// waitLink blocks while the partition lasts.
func (p *silentProxy) waitLink() {
	p.mu.Lock()
	for p.cut {
		p.cond.Wait()
	}
	p.mu.Unlock()
}

func (p *silentProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.forward(c)
	}
}

// forward connects c to the target once the link is up (a connection
// attempt across a partition gets no answer), then pumps both ways.
func (p *silentProxy) forward(c net.Conn) {
	p.waitLink()
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = c.Close()
		return
	}
	p.mu.Lock()
	p.conns = append(p.conns, c, up)
	p.mu.Unlock()
	go p.pump(c, up)
	go p.pump(up, c)
}

// pump copies src to dst, holding every chunk (and the end of the stream)
// back while the partition lasts: nothing is lost, only delayed, as TCP
// retransmission would deliver it after the link comes back.
func (p *silentProxy) pump(src, dst net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		p.waitLink()
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				_ = src.Close()
				return
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				if tc, ok := dst.(*net.TCPConn); ok {
					_ = tc.CloseWrite()
					return
				}
			}
			_ = dst.Close()
			return
		}
	}
}

func (p *silentProxy) close() {
	_ = p.ln.Close()
	p.setCut(false)
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		_ = c.Close()
	}
}

// partitionConfig is one pipeline per cron second whose runs last 2.5 s:
// longer than the renewal deadline (2 s of the 3 s TTL), so a run in
// flight when the link is cut loses its lease before it can commit.
const partitionConfig = `format = "agora/v1"

[pipelines.part.source]
type = "postgres"
url = "${PG_URL}"
query = "SELECT :run_number::bigint AS run, :fencing_token::bigint AS token, '${REPLICA}'::text AS worker FROM (SELECT pg_sleep(2.5)) AS slow"

[pipelines.part.schedule]
mode = "cron"
expr = "* * * * * *"

[[pipelines.part.sinks]]
type = "postgres"
url = "${PG_URL}"
table = "rows_part"
columns = ["run", "token", "worker"]
`

func TestConfigReplicaSilentlyPartitionedFromRedisMidRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a fleet for about 20 seconds")
	}
	srv := redistest.Start(t)
	pg := pgtest.Start(t)
	url := pg.NewDatabase(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE TABLE rows_part (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, run bigint NOT NULL, token bigint NOT NULL, worker text NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	proxy := startSilentProxy(t, srv.Addr())
	dir := t.TempDir()
	path := writeConfig(t, dir, "pipelines.toml", partitionConfig)
	start := func(name, redisURL string) *agoraProc {
		return startAgora(t, dir, []string{
			"AGORA_DISTRIBUTED_REDIS_URL=" + redisURL,
			"AGORA_DISTRIBUTED_LEASE_TTL_SECONDS=3",
			"AGORA_DISTRIBUTED_HEARTBEAT_INTERVAL=1s",
			"PG_URL=" + url, "REPLICA=" + name,
		}, "worker", "--config", path, "-log-format", "json", "-log-level", "debug", "-health-port", "0")
	}
	// The replica behind the proxy starts alone, so that it holds the
	// pipeline (a holder of 2.5 s runs keeps it, and preferred workers
	// would otherwise decide who does).
	cut := start("cut", "redis://"+proxy.addr()+"/0")

	// Cut the link while it runs a slot (its run started and has not
	// finished), after a first run went through; the others start then.
	deadline := time.Now().Add(40 * time.Second)
	waitRows(t, conn, "part", 1, 40*time.Second)
	var inFlight int64
	for inFlight == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the replica behind the proxy started no run in 40 s:\n%s", cut.stderr)
		}
		time.Sleep(5 * time.Millisecond)
		inFlight = runInFlight(cut.stderr.String())
	}
	proxy.setCut(true)
	cutAt := time.Now()
	others := []*agoraProc{start("r2", srv.URL()), start("r3", srv.URL())}
	t.Logf("link cut at %s while slot %d ran", cutAt.Format("15:04:05.000"), inFlight)
	time.Sleep(7 * time.Second) // past the 3 s lease TTL and the record's expiry
	proxy.setCut(false)
	time.Sleep(4 * time.Second)
	for _, p := range append(others, cut) {
		p.signal(t, syscall.SIGINT)
	}
	for _, p := range append(others, cut) {
		p.wait(t, 20*time.Second)
	}

	rows := readRows(t, conn, "part")
	byRun := map[int64][]slotRow{}
	lo, hi := int64(math.MaxInt64), int64(0)
	during := 0
	for i, r := range rows {
		byRun[r.run] = append(byRun[r.run], r)
		lo, hi = min(lo, r.run), max(hi, r.run)
		if i > 0 && r.token <= rows[i-1].token {
			t.Errorf("token %d (slot %d, %s) committed after token %d (slot %d, %s)",
				r.token, r.run, r.worker, rows[i-1].token, rows[i-1].run, rows[i-1].worker)
		}
		if r.run > cutAt.Unix()+3 && r.run < cutAt.Unix()+7 {
			during++
		}
	}
	for run, rs := range byRun {
		if len(rs) > 1 {
			t.Errorf("slot %d has %d rows: %+v", run, len(rs), rs)
		}
	}
	if during == 0 {
		t.Error("no slot ran while the replica was cut off: the others did not take over")
	}
	for _, r := range byRun[inFlight] {
		if r.worker == "cut" {
			t.Errorf("the run in flight at the cut committed (token %d) after its lease was lost", r.token)
		}
	}
	if !strings.Contains(cut.stderr.String(), "lease lost") {
		t.Errorf("the cut replica never reported its lease lost:\n%s", cut.stderr)
	}
	t.Logf("%d rows over slots %d..%d, %d while the link was down past the TTL", len(rows), lo, hi, during)
}

// runInFlight returns a slot whose run the log shows started and not
// finished, or 0.
func runInFlight(logs string) int64 {
	open := map[int64]bool{}
	for _, l := range lines(logs) {
		var r runLog
		if json.Unmarshal([]byte(l), &r) != nil || r.Pipeline == "" {
			continue
		}
		switch r.Msg {
		case "run started":
			open[r.Run] = true
		case "run finished":
			delete(open, r.Run)
		}
	}
	for run := range open {
		return run
	}
	return 0
}
