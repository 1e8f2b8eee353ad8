package postgres

import (
	"context"
	"testing"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/etl/internal/sinktest"
)

func TestRegisteredComponentsBuildFromConfig(t *testing.T) {
	pool, url := testPool(t)
	db := suiteDB(pool, defaultUpsertPath)
	db.Exec(t, "CREATE TABLE a (id bigint PRIMARY KEY, v text); INSERT INTO a VALUES (1, 'x'), (2, 'y'); CREATE TABLE b (id bigint PRIMARY KEY, v text)")
	r := etl.NewRegistry()
	Register(r)
	ctx := sinktest.Leased(3)

	srcSpec, err := r.Lookup(etl.KindSource, "postgres")
	if err != nil {
		t.Fatal(err)
	}
	scfg := srcSpec.NewConfig().(*SourceConfig)
	*scfg = SourceConfig{URL: url, Query: "SELECT id, v FROM a ORDER BY id"}
	if err := srcSpec.Validate(scfg); err != nil {
		t.Fatal(err)
	}
	src, err := srcSpec.BuildSource(ctx, scfg)
	if err != nil {
		t.Fatal(err)
	}
	sinkSpec, err := r.Lookup(etl.KindSink, "postgres")
	if err != nil {
		t.Fatal(err)
	}
	kcfg := sinkSpec.NewConfig().(*SinkConfig)
	*kcfg = SinkConfig{URL: url, Table: "b", Mode: "upsert", Key: []string{"id"}}
	if err := sinkSpec.Validate(kcfg); err != nil {
		t.Fatal(err)
	}
	sink, err := sinkSpec.BuildSink(ctx, kcfg)
	if err != nil {
		t.Fatal(err)
	}
	_, recs, _ := sinktest.Drain(t, ctx, src, 10)
	if err := sink.Write(ctx, recs); err != nil {
		t.Fatal(err)
	}
	if got := db.Strings(t, "SELECT id || v FROM b ORDER BY id"); len(got) != 2 || got[0] != "1x" || got[1] != "2y" {
		t.Fatalf("rows %v", got)
	}
	// A second build for the next run shares the process's pool.
	again, err := sinkSpec.BuildSink(context.Background(), kcfg)
	if err != nil || again.(*Sink).pool != sink.(*Sink).pool {
		t.Fatalf("second build: %v, same pool %v", err, err == nil && again.(*Sink).pool == sink.(*Sink).pool)
	}
}
