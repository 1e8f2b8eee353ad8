package runtime

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"strconv"
)

// newWorkerID returns an id unique to this process: host, pid and a random
// suffix, so two workers on one host, or a restarted worker reusing a pid,
// never share an id.
func newWorkerID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown-host"
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return host + "-" + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(b[:])
}
