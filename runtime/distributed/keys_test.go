package distributed

import (
	"strings"
	"testing"
)

// clusterSlot computes the Redis Cluster slot of key as the server does:
// CRC16/XMODEM of the hash tag (the text between the first { and the next }
// when non-empty) or of the whole key, modulo 16384.
func clusterSlot(key string) uint16 {
	if open := strings.IndexByte(key, '{'); open >= 0 {
		if end := strings.IndexByte(key[open+1:], '}'); end > 0 {
			key = key[open+1 : open+1+end]
		}
	}
	var crc uint16
	for i := 0; i < len(key); i++ {
		crc ^= uint16(key[i]) << 8
		for b := 0; b < 8; b++ {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc % 16384
}

func TestClusterSlotMatchesKnownValues(t *testing.T) {
	// Values from the Redis Cluster specification and CLUSTER KEYSLOT.
	for key, want := range map[string]uint16{"123456789": 12739, "foo": 12182, "{user1000}.following": 3443} {
		if got := clusterSlot(key); got != want {
			t.Errorf("clusterSlot(%q) = %d, want %d", key, got, want)
		}
	}
}

func TestPipelineKeysShareOneClusterSlot(t *testing.T) {
	for _, prefix := range []string{DefaultKeyPrefix, "app:", "x*y?:", ""} {
		k := keys{prefix: prefix}
		for _, id := range []string{"orders-hourly", "events_consumer", "a:b", "weird}id", "{nested", "ünïcode"} {
			ks := k.pipelineKeys(id)
			if len(ks) != 6 {
				t.Fatalf("pipelineKeys returned %d keys", len(ks))
			}
			slot := clusterSlot(ks[0])
			for _, key := range ks[1:] {
				if got := clusterSlot(key); got != slot {
					t.Errorf("prefix %q id %q: %s in slot %d, %s in slot %d", prefix, id, ks[0], slot, key, got)
				}
			}
			seen := map[string]bool{}
			for _, key := range ks {
				if seen[key] {
					t.Errorf("duplicate key %q", key)
				}
				seen[key] = true
			}
		}
	}
}

func TestKeyLayout(t *testing.T) {
	k := keys{prefix: DefaultKeyPrefix}
	want := map[string]string{
		k.lease("orders-hourly"): "agora:distributed:lease:{orders-hourly}",
		k.token("orders-hourly"): "agora:distributed:token:{orders-hourly}",
		k.done("orders-hourly"):  "agora:distributed:completed:{orders-hourly}",
		k.once("orders-hourly"):  "agora:distributed:once:{orders-hourly}",
		k.worker("w-1"):          "agora:distributed:worker:w-1",
	}
	for got, w := range want {
		if got != w {
			t.Errorf("key %q, want %q", got, w)
		}
	}
}

func TestGlobEscape(t *testing.T) {
	if got := globEscape(`a*b?c[d]e\f`); got != `a\*b\?c\[d\]e\\f` {
		t.Errorf("globEscape = %q", got)
	}
	if got := (keys{prefix: "p*:"}).workerPattern(); got != `p\*:worker:*` {
		t.Errorf("workerPattern = %q", got)
	}
}
