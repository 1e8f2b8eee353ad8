package distributed

// RedlockStatus is CoordinatorStatus.Backend in Redlock mode: the quorum
// nodes' health and what quorum acquisitions and renewals ran into.
type RedlockStatus struct {
	// Quorum is how many nodes must accept a lease: a majority.
	Quorum int `json:"quorum"`
	// ReachableNodes counts the nodes whose last request got an answer.
	ReachableNodes int `json:"reachable_nodes"`
	// Nodes are the quorum nodes, in the order of RedlockRedisURLs.
	Nodes []RedlockNodeStatus `json:"nodes"`
	// FailedAcquisitions counts acquisitions that reserved a token on the
	// primary but did not get a majority within the validity window
	// (contention included).
	FailedAcquisitions uint64 `json:"failed_acquisitions"`
	// LateAcquisitions counts the failed acquisitions whose majority came
	// only after the validity window.
	LateAcquisitions uint64 `json:"late_acquisitions"`
	// LostRenewals counts leases a majority of nodes no longer held at
	// renewal.
	LostRenewals uint64 `json:"lost_renewals"`
	// Reseated counts leases put back on a node that had lost its data.
	Reseated uint64 `json:"reseated"`
	// NodeTimeout bounds one request to one node.
	NodeTimeout string `json:"node_timeout"`
	// Validity is how long a lease counts as valid from before its first
	// request: LeaseTTL less the clock drift allowance.
	Validity string `json:"validity"`
	// ClockDriftFactor is RedlockClockDriftFactor.
	ClockDriftFactor float64 `json:"clock_drift_factor"`
}

// RedlockNodeStatus describes one quorum node in /status.
type RedlockNodeStatus struct {
	// URL is the node's URL, password redacted.
	URL string `json:"url"`
	// Reachable is true when the node answered its last request.
	Reachable bool `json:"reachable"`
	// Contacted is false until the first request to the node ended.
	Contacted bool `json:"contacted"`
	// Primary is true when the node is the primary Redis too.
	Primary bool `json:"primary,omitempty"`
	// Failures counts the requests to the node that failed.
	Failures uint64 `json:"failures"`
	// LastError is the node's last error, redacted.
	LastError string `json:"last_error,omitempty"`
}

func (b *quorumBackend) status() any {
	q := b.redlock.Status()
	st := RedlockStatus{
		Quorum:             q.Quorum,
		ReachableNodes:     q.ReachableNodes,
		Nodes:              make([]RedlockNodeStatus, len(q.Nodes)),
		FailedAcquisitions: q.FailedAcquisitions,
		LateAcquisitions:   q.LateAcquisitions,
		LostRenewals:       q.LostRenewals,
		Reseated:           q.Reseated,
		NodeTimeout:        q.NodeTimeout,
		Validity:           q.Validity,
		ClockDriftFactor:   q.ClockDriftFactor,
	}
	for i, n := range q.Nodes {
		st.Nodes[i] = RedlockNodeStatus(n)
	}
	return st
}
