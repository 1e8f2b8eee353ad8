package quorum

import "testing"

func TestParseNodeValue(t *testing.T) {
	l := Lease{Owner: "a b#c", Token: 9, Mode: 1_800_000_000}
	got, err := parseNodeValue(nodeValue(l))
	if err != nil || got != (Stored{Token: 9, Run: 1_800_000_000, Owner: "a b#c"}) {
		t.Fatalf("parseNodeValue(nodeValue(%+v)) = %+v, %v", l, got, err)
	}
	for _, v := range []string{"", "9 7 w#1", "x 7 0 w#1", "9 y 0 w#1"} {
		if _, err := parseNodeValue(v); err == nil {
			t.Errorf("parseNodeValue(%q) did not fail", v)
		}
	}
}
