package leasebackend

import "strings"

// HashSlot is the Redis Cluster hash slot of key: CRC16 (XMODEM) of its
// hash tag (the text between the first "{" and the first "}" after it,
// when not empty) or of the whole key, modulo 16384. The acquire calls of
// a burst on a Cluster are grouped by it: requests whose keys share a slot
// go to one script call (see runtime/distributed's acquireMany).
func HashSlot(key string) uint16 {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	var crc uint16
	for k := 0; k < len(key); k++ {
		crc ^= uint16(key[k]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc % 16384
}
