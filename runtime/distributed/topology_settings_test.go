package distributed

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestQuorumNodesMustBePlainMasters(t *testing.T) {
	err := Options{
		RedisURL: "redis://primary:6379",
		RedlockRedisURLs: []string{
			"redis://r1:6379", "redis+cluster://:Sup3r@c1:7000?addr=c2:7001", "redis+sentinel://s1:26379?master_name=m&password=Sup3r",
		},
	}.Validate()
	if err == nil {
		t.Fatal("Cluster and Sentinel URLs accepted as quorum nodes")
	}
	msg := err.Error()
	for _, want := range []string{"RedlockRedisURLs[1]", "names a Redis cluster", "RedlockRedisURLs[2]", "names a Redis sentinel", "independent master"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "Sup3r") {
		t.Errorf("error %q shows a password", msg)
	}
}

func TestLoadConfigNamesTheVariableForABadClusterOrSentinelURL(t *testing.T) {
	t.Setenv(envNames.RedisURL, "redis+sentinel://:Sup3rSecret@s1:26379?addr=s2")
	_, err := LoadConfig()
	if err == nil {
		t.Fatal("LoadConfig accepted the URL")
	}
	msg := err.Error()
	if !strings.Contains(msg, envNames.RedisURL+": ") || !strings.Contains(msg, "has no master_name") || strings.Contains(msg, "Sup3r") {
		t.Fatalf("error %q", msg)
	}

	t.Setenv(envNames.RedisURL, "redis+sentinel://s1:26379?master_name=m&password=Sup3rSecret")
	cfg, err := LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	if s := cfg.String(); strings.Contains(s, "Sup3r") || !strings.Contains(s, "password=xxxxx") {
		t.Fatalf("String() = %q", s)
	}
}

func TestStatusShowsTopologyAndNodesWithoutCredentials(t *testing.T) {
	for _, tc := range []struct {
		raw, topology, master string
		nodes                 []string
	}{
		{"redis://:Sup3r@127.0.0.1:6390/0", "single", "", []string{"127.0.0.1:6390"}},
		{"redis+cluster://u:Sup3r@127.0.0.1:7000?addr=127.0.0.1:7001", "cluster", "", []string{"127.0.0.1:7000", "127.0.0.1:7001"}},
		{"redis+sentinel://u:Sup3r@127.0.0.1:26379?addr=127.0.0.1:26380&master_name=mymaster&password=Sup3r2", "sentinel", "mymaster", []string{"127.0.0.1:26379", "127.0.0.1:26380"}},
	} {
		c, err := NewRedisWorkerCoordinator(Options{RedisURL: tc.raw})
		if err != nil {
			t.Fatal(err)
		}
		st := c.Status().(CoordinatorStatus)
		_ = c.Close()
		if st.Topology != tc.topology || st.MasterName != tc.master || !slices.Equal(st.Nodes, tc.nodes) {
			t.Errorf("%s: topology %q master %q nodes %v", tc.raw, st.Topology, st.MasterName, st.Nodes)
		}
		raw, _ := json.Marshal(st)
		if strings.Contains(string(raw), "Sup3r") || !strings.Contains(string(raw), `"topology":"`+tc.topology+`"`) {
			t.Errorf("%s: status %s", tc.raw, raw)
		}
	}
}
