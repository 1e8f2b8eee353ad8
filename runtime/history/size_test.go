package history

import (
	"testing"
	"unsafe"
)

// TestEntrySize: a pipeline's entry in a Memory, its ring included, fits
// the allocator's 80-byte class; the ring itself stays 64 bytes.
func TestEntrySize(t *testing.T) {
	if size := unsafe.Sizeof(ring{}); size > 64 {
		t.Errorf("ring is %d bytes, want at most 64", size)
	}
	if size := unsafe.Sizeof(memoryEntry{}); size > 80 {
		t.Errorf("memoryEntry is %d bytes, want at most 80", size)
	}
}
