package sqlite

import (
	"testing"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/etl/internal/sinktest"
)

func TestRegisteredComponentsBuildFromConfig(t *testing.T) {
	db, path := testDB(t)
	sdb := suiteDB(t, db)
	sdb.Exec(t, "CREATE TABLE a (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO a VALUES (1, 'x'), (2, 'y')")
	r := etl.NewRegistry()
	Register(r)
	ctx := sinktest.Leased(3)
	srcSpec, err := r.Lookup(etl.KindSource, "sqlite")
	if err != nil {
		t.Fatal(err)
	}
	scfg := &SourceConfig{Path: path, Query: "SELECT id, v FROM a ORDER BY id"}
	if err := srcSpec.Validate(scfg); err != nil {
		t.Fatal(err)
	}
	src, err := srcSpec.BuildSource(ctx, scfg)
	if err != nil {
		t.Fatal(err)
	}
	sinkSpec, err := r.Lookup(etl.KindSink, "sqlite")
	if err != nil {
		t.Fatal(err)
	}
	kcfg := &SinkConfig{Path: path, Table: "b", Mode: "upsert", Key: []string{"id"}, CreateTable: true}
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
	if got := sdb.Strings(t, "SELECT id || v FROM b ORDER BY id"); len(got) != 2 || got[0] != "1x" || got[1] != "2y" {
		t.Fatalf("rows %v", got)
	}
}
