package runtime

import (
	"testing"
	"unsafe"
)

// TestLocalEntrySize: a pipeline's entry fits the allocator's 48-byte
// class; its run history, when the coordinator is given one, lives in
// the store.
func TestLocalEntrySize(t *testing.T) {
	if size := unsafe.Sizeof(localEntry{}); size > 48 {
		t.Errorf("localEntry is %d bytes, want at most 48", size)
	}
}
