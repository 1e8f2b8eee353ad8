package config

import "testing"

func TestIndexPositions(t *testing.T) {
	doc := []byte(`format = "agora/v1"

[pipelines.orders.source]
type = "iterable"
records = [{id = 1}, {id = 2}]

[[pipelines.orders.sinks]]
type = "stdout"

[[pipelines.orders.sinks]]
type = "file"
opts.mode = "x"

[[pipelines.orders.sinks.extra]]
k = 1
`)
	ix := newIndex(doc)
	root := path{}
	orders := path{"pipelines", "orders"}
	sinks := orders.child("sinks")
	for _, tc := range []struct {
		name string
		got  position
		want position
	}{
		{"format key", ix.keyPos(root.child("format")), position{1, 1}},
		{"format value", ix.valuePos(root.child("format")), position{1, 10}},
		{"pipelines key", ix.keyPos(path{"pipelines"}), position{3, 2}},
		{"orders key", ix.keyPos(orders), position{3, 12}},
		{"source key", ix.keyPos(orders.child("source")), position{3, 19}},
		{"records value", ix.valuePos(orders.child("source").child("records")), position{5, 11}},
		{"record 1", ix.valuePos(orders.child("source").child("records").index(1)), position{5, 22}},
		{"record 1 id", ix.keyPos(orders.child("source").child("records").index(1).child("id")), position{5, 23}},
		{"sink 0", ix.keyPos(sinks.index(0)), position{7, 20}},
		{"sink 1 type", ix.valuePos(sinks.index(1).child("type")), position{11, 8}},
		{"sink 1 dotted", ix.keyPos(sinks.index(1).child("opts").child("mode")), position{12, 6}},
		{"nested array table", ix.keyPos(sinks.index(1).child("extra").index(0).child("k")), position{15, 1}},
		{"unknown falls back to parent", ix.keyPos(sinks.index(1).child("nope")), position{10, 20}},
		{"string inside", ix.within(orders.child("source").child("type"), "rable"), position{4, 12}},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	if ix.order(root.child("format")) >= ix.order(orders) {
		t.Errorf("format should come before the pipeline in file order")
	}
}
