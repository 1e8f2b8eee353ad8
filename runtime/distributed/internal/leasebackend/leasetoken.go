package leasebackend

import (
	"fmt"
	"strconv"
	"strings"
)

// LeaseToken reads the token from a stored lease value: "<token> <run>
// <owner>" on the primary, "<token> <run> <mode> <owner>" on quorum nodes.
func LeaseToken(v string) (int64, error) {
	field, _, _ := strings.Cut(v, " ")
	token, err := strconv.ParseInt(field, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("malformed lease value %q", field)
	}
	return token, nil
}
