package distributed

import (
	"context"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
)

func TestNewStateClientReachesTheServerOfTheURL(t *testing.T) {
	mr := miniredis.RunT(t)
	c, err := NewStateClient("redis://" + mr.Addr() + "/0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Set(context.Background(), "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if got, _ := mr.Get("k"); got != "v" {
		t.Fatalf("k = %q", got)
	}
	_, err = NewStateClient("127.0.0.1:6379")
	if err == nil || !strings.Contains(err.Error(), "no scheme") {
		t.Fatalf("URL without a scheme: %v", err)
	}
}
