package runtime

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime/history"
	"github.com/agora-etl/agora/runtime/internal/engine"
)

// sameFields fails unless a and b list the same field names and types in
// the same order, but for the field types named in twins (runtime's type
// and the engine's twin of it): what lets the conversions of adapter.go
// cost nothing, and what statusOf copies.
func sameFields(t *testing.T, a, b reflect.Type, twins map[reflect.Type]reflect.Type) {
	t.Helper()
	if a.NumField() != b.NumField() {
		t.Fatalf("%v has %d fields, %v has %d", a, a.NumField(), b, b.NumField())
	}
	for i := range a.NumField() {
		fa, fb := a.Field(i), b.Field(i)
		if !fa.IsExported() {
			continue
		}
		if fa.Name != fb.Name || (fa.Type != fb.Type && twins[fa.Type] != fb.Type) {
			t.Errorf("%v field %d is %s %v, %v has %s %v", a, i, fa.Name, fa.Type, b, fb.Name, fb.Type)
		}
	}
}

func TestEngineTwinsHaveRuntimesFields(t *testing.T) {
	twins := map[reflect.Type]reflect.Type{
		reflect.TypeFor[PipelineState]():  reflect.TypeFor[engine.State](),
		reflect.TypeFor[*LastRunStatus](): reflect.TypeFor[*engine.LastRun](),
		reflect.TypeFor[RunOutcomes]():    reflect.TypeFor[engine.Outcomes](),
	}
	sameFields(t, reflect.TypeFor[Lease](), reflect.TypeFor[engine.Lease](), nil)
	sameFields(t, reflect.TypeFor[LeaseRequest](), reflect.TypeFor[engine.LeaseRequest](), nil)
	sameFields(t, reflect.TypeFor[LeaseReply](), reflect.TypeFor[engine.LeaseReply](), nil)
	sameFields(t, reflect.TypeFor[FailureState](), reflect.TypeFor[engine.FailureState](), nil)
	sameFields(t, reflect.TypeFor[PipelineStatus](), reflect.TypeFor[engine.Status](), twins)
	sameFields(t, reflect.TypeFor[RunOutcomes](), reflect.TypeFor[engine.Outcomes](), nil)
	sameFields(t, reflect.TypeFor[LastRunStatus](), reflect.TypeFor[engine.LastRun](), nil)
}

// TestStatusOfCopiesEveryField fills every field of an engine status with
// a value of its own and finds each in runtime's.
func TestStatusOfCopiesEveryField(t *testing.T) {
	var st engine.Status
	v := reflect.ValueOf(&st).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString(v.Type().Field(i).Name)
		case reflect.Uint8, reflect.Uint64:
			f.SetUint(uint64(i + 1))
		case reflect.Int, reflect.Int64:
			f.SetInt(int64(i + 1))
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
		case reflect.Struct: // Records and Outcomes: their first counter
			if g := f.Field(0); g.CanInt() {
				g.SetInt(int64(i + 1))
			} else {
				g.SetUint(uint64(i + 1))
			}
		}
	}
	got := reflect.ValueOf(statusOf(st))
	for i := range v.NumField() {
		want, have := v.Field(i), got.Field(i)
		switch want.Kind() {
		case reflect.Pointer:
			if want.UnsafePointer() != have.UnsafePointer() {
				t.Errorf("%s: pointer not carried over", v.Type().Field(i).Name)
			}
		default:
			if !reflect.DeepEqual(want.Interface(), have.Convert(want.Type()).Interface()) {
				t.Errorf("%s: got %v, want %v", v.Type().Field(i).Name, have, want)
			}
		}
	}
}

// TestContextLeaseBothWays checks that a lease put in a context by either
// side is read by the other.
func TestContextLeaseBothWays(t *testing.T) {
	lease := Lease{PipelineID: "p", WorkerID: "w", RunNumber: 7, Slot: true, FencingToken: 3}
	if got, ok := engine.LeaseFromContext(ContextWithLease(context.Background(), lease)); !ok || Lease(got) != lease {
		t.Fatalf("engine read %+v, %v; want %+v", got, ok, lease)
	}
	if got, ok := LeaseFromContext(engine.ContextWithLease(context.Background(), engine.Lease(lease))); !ok || got != lease {
		t.Fatalf("runtime read %+v, %v; want %+v", got, ok, lease)
	}
	params := map[string]string{"k": "v"}
	if got := engine.ParamsFromContext(ContextWithParams(context.Background(), params)); got["k"] != "v" {
		t.Fatalf("engine read params %v", got)
	}
	ch := make(chan struct{})
	if got := ShutdownRequested(engine.ContextWithShutdown(context.Background(), ch)); got != (<-chan struct{})(ch) {
		t.Fatal("runtime did not read the engine's shutdown channel")
	}
}

func TestErrorsHooks(t *testing.T) {
	err := newPanicError("Run", "boom", []byte("stack"))
	var pe *PanicError
	if !errors.As(err, &pe) || pe.Where != "Run" {
		t.Fatalf("newPanicError made %T %v", err, err)
	}
	if stack, ok := panicStack(errors.Join(errors.New("x"), err)); !ok || string(stack) != "stack" {
		t.Fatalf("panicStack = %q, %v", stack, ok)
	}
	if _, ok := panicStack(errors.New("x")); ok {
		t.Fatal("panicStack found a panic in a plain error")
	}
	until := time.Unix(100, 0)
	st, ok := failingState(&FailingError{PipelineID: "p", State: FailureState{Count: 2, Until: until, Stopped: true, LastError: "e"}})
	if !ok || st != (engine.FailureState{Count: 2, Until: until, Stopped: true, LastError: "e"}) {
		t.Fatalf("failingState = %+v, %v", st, ok)
	}
	if _, ok := failingState(ErrLeaseLost); ok {
		t.Fatal("failingState found a FailingError in ErrLeaseLost")
	}
}

// batchOnly is a coordinator's capabilities with a BatchLeaser, a
// LeaseDeferrer and a LeaseHolderReporter that record what they are asked.
type batchOnly struct{ asked []LeaseRequest }

func (b *batchOnly) TryAcquireLeases(_ context.Context, reqs []LeaseRequest) []LeaseReply {
	b.asked = append(b.asked, reqs...)
	out := make([]LeaseReply, len(reqs))
	for i := range reqs {
		out[i] = LeaseReply{Acquired: i == 0, Err: map[bool]error{true: nil, false: ErrSlotCompleted}[i == 0]}
	}
	return out
}

func (b *batchOnly) DeferLease(req LeaseRequest) time.Duration {
	if req.Ahead {
		return time.Second
	}
	return 0
}

func (b *batchOnly) LeaseHolder(context.Context, string) (Lease, bool, error) {
	return Lease{WorkerID: "other", FencingToken: 9}, true, nil
}

func (b *batchOnly) Failures(string) (FailureState, bool) { return FailureState{Count: 4}, true }

func TestCapabilitiesOf(t *testing.T) {
	if ec := capabilitiesOf(Capabilities{}); ec != (engine.Capabilities{}) {
		t.Fatalf("capabilities a coordinator lacks are not nil: %+v", ec)
	}
	b := &batchOnly{}
	ec := capabilitiesOf(Capabilities{BatchLeaser: b, LeaseDeferrer: b, LeaseHolderReporter: b, FailureSharer: failures{b}})
	replies := ec.BatchLeaser.TryAcquireLeases(context.Background(), []engine.LeaseRequest{{PipelineID: "a", RunNumber: 1}, {PipelineID: "b", RunNumber: 2, Ahead: true}})
	if len(b.asked) != 2 || b.asked[1] != (LeaseRequest{PipelineID: "b", RunNumber: 2, Ahead: true}) {
		t.Fatalf("the batch asked %+v", b.asked)
	}
	if len(replies) != 2 || !replies[0].Acquired || !errors.Is(replies[1].Err, ErrSlotCompleted) {
		t.Fatalf("replies %+v", replies)
	}
	if d := ec.LeaseDeferrer.DeferLease(engine.LeaseRequest{Ahead: true}); d != time.Second {
		t.Fatalf("DeferLease = %v", d)
	}
	if l, ok, err := ec.LeaseHolderReporter.LeaseHolder(context.Background(), "a"); !ok || err != nil || l.WorkerID != "other" || l.FencingToken != 9 {
		t.Fatalf("LeaseHolder = %+v, %v, %v", l, ok, err)
	}
	if st, ok := ec.FailureSharer.Failures("a"); !ok || st.Count != 4 {
		t.Fatalf("Failures = %+v, %v", st, ok)
	}
}

// failures is a FailureSharer that shares nothing and reads b's state.
type failures struct{ b *batchOnly }

func (failures) ShareFailures(map[string]FailureRules)     {}
func (f failures) Failures(id string) (FailureState, bool) { return f.b.Failures(id) }

func TestLocalLeasesThroughTheAdapter(t *testing.T) {
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	coord := NewLocalCoordinator(SystemClock{}, WithLocalRunHistory(history.New(history.Policy{})))
	if err := coord.Start(context.Background(), "w", []string{"p"}); err != nil {
		t.Fatal(err)
	}
	ec := capabilitiesOf(coord.Capabilities())
	leases := ec.LocalLeaser.LocalLeases("p")
	lease, ok, err := leases.Acquire(SlotRun(now), now)
	if !ok || err != nil || lease.PipelineID != "p" || lease.RunNumber != now.Unix() {
		t.Fatalf("Acquire = %+v, %v, %v", lease, ok, err)
	}
	if cur, held := (engineCoordinator{coord}).CurrentLease("p"); !held || cur.RunNumber != lease.RunNumber || !cur.AcquiredAt.Equal(lease.AcquiredAt) {
		t.Fatalf("CurrentLease = %+v, %v; want %+v", cur, held, lease)
	}
	leases.Release(true)
	if _, ok, err := leases.Acquire(SlotRun(now), now); ok || !errors.Is(err, ErrSlotCompleted) {
		t.Fatalf("the completed slot was granted again: %v, %v", ok, err)
	}
}

func TestSpecsOf(t *testing.T) {
	p := PipelineFunc(func(context.Context) error { return nil })
	sp := &ScheduledPipeline{PipelineID: "p", Schedule: MustCron("*/5 * * * *"), ErrorBackoff: time.Second,
		MaxConsecutiveErrors: 3, CatchUp: CatchUpAll, RerunInterrupted: true, Grace: 2 * time.Second,
		Timeout: time.Minute, Deadline: time.Hour, After: []string{"up"}, AfterTimeout: time.Minute,
		Factory: func(context.Context) (Pipeline, error) { return p, nil }}
	plain := func(id string) *ScheduledPipeline {
		return &ScheduledPipeline{PipelineID: id, Schedule: Every(time.Minute), Factory: func(context.Context) (Pipeline, error) { return nil, nil }}
	}
	specs := specsOf([]*ScheduledPipeline{sp, plain("a"), plain("b")})
	spec := specs[0]
	if spec.PipelineID != "p" || spec.ErrorBackoff != time.Second || spec.MaxConsecutiveErrors != 3 ||
		spec.CatchUp != engine.CatchUpAll || !spec.RerunInterrupted || spec.Grace != 2*time.Second ||
		spec.Timeout != time.Minute || spec.Deadline != time.Hour || len(spec.After) != 1 || spec.AfterTimeout != time.Minute {
		t.Fatalf("specsOf = %+v %+v", spec, spec.Settings)
	}
	if got, err := spec.Factory.Build(context.Background()); err != nil || got == nil {
		t.Fatalf("the spec's factory returned %v, %v", got, err)
	}
	if got, _ := specs[1].Factory.Build(context.Background()); got != nil {
		t.Fatalf("a nil pipeline became %#v", got)
	}
	if specs[1].Settings != specs[2].Settings || specs[1].Settings == spec.Settings || !reflect.ValueOf(*specs[1].Settings).IsZero() {
		t.Fatal("pipelines without settings must share one zero Settings")
	}
	from := time.Date(2026, 12, 3, 10, 2, 0, 0, time.UTC)
	for _, tc := range []struct {
		s    Schedule
		text string
		next time.Time
	}{
		{MustCron("*/5 * * * *"), `cron="*/5 * * * *"`, time.Date(2026, 12, 3, 10, 5, 0, 0, time.UTC)},
		{Every(time.Minute), "every=1m0s", from.Add(time.Minute)},
		{Continuous(), "continuous", from},
		{Once(), "once", from},
		{Schedule{}, "none", time.Time{}},
	} {
		es := tc.s.engine()
		if es.String() != tc.text || es.Interval() != tc.s.Interval() || !es.Next(from).Equal(tc.next) || ScheduleKind(es.Kind()) != tc.s.Kind() {
			t.Errorf("%s: the engine's schedule is %s, interval %v, next %v", tc.text, es, es.Interval(), es.Next(from))
		}
	}
}

func TestEngineClock(t *testing.T) {
	c := engineClock{SystemClock{}}
	tm := c.NewTimer(time.Millisecond)
	select {
	case <-tm.C():
	case <-time.After(5 * time.Second):
		t.Fatal("the engine clock's timer did not fire")
	}
	if c.Now().IsZero() {
		t.Fatal("zero time")
	}
}
