package leasebackend

import "testing"

func TestHashSlotMatchesRedisCluster(t *testing.T) {
	// Values from CLUSTER KEYSLOT on Redis 7.
	for key, want := range map[string]uint16{
		"123456789":                        12739, // the CRC16 check value 0x31C3
		"foo":                              12182,
		"{user1000}.following":             3443,
		"{user1000}.followers":             3443,
		"foo{}{bar}":                       8363, // an empty tag hashes the whole key
		"foo{{bar}}zap":                    4015, // the tag is "{bar"
		"agora:distributed:lease:{p00001}": 985,
	} {
		if got := HashSlot(key); got != want {
			t.Errorf("HashSlot(%q) = %d, want %d", key, got, want)
		}
	}
}
