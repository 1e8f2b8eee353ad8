package engine

import "testing"

func TestSeamRun(t *testing.T) {
	if got := seamRun(1700000000); got != SlotRunFlag|1700000000 {
		t.Fatalf("a slot is asked as %d", got)
	}
	if seamRun(RunNumberAuto) != RunNumberAuto || seamRun(RunNumberOnce) != RunNumberOnce {
		t.Fatal("the special run numbers must pass unchanged")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("slotRunUnix(0) did not panic")
		}
	}()
	slotRunUnix(0)
}
