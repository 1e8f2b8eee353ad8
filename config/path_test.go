package config

import "testing"

func TestPathString(t *testing.T) {
	p := path{"pipelines", "orders"}.child("sinks").index(1).child("type")
	if got, want := p.String(), "pipelines.orders.sinks[1].type"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got, want := (path{"a.b", "c d", "e"}).String(), `"a.b"."c d".e`; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got := (path{}).String(); got != "" {
		t.Errorf("root String() = %q", got)
	}
	// child must not share the parent's backing array.
	base := make(path, 1, 4)
	base[0] = "x"
	a, b := base.child("a"), base.child("b")
	if a.String() != "x.a" || b.String() != "x.b" {
		t.Errorf("children share storage: %s %s", a, b)
	}
	if a.last() != "a" || (path{}).last() != "" {
		t.Errorf("last() = %q", a.last())
	}
}
