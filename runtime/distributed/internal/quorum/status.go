package quorum

// Status is the nodes' health and what quorum acquisitions and renewals ran
// into; runtime/distributed shows it as RedlockStatus.
type Status struct {
	Quorum             int
	ReachableNodes     int
	Nodes              []NodeStatus
	FailedAcquisitions uint64
	LateAcquisitions   uint64
	LostRenewals       uint64
	Reseated           uint64
	NodeTimeout        string
	Validity           string
	ClockDriftFactor   float64
}

// NodeStatus describes one quorum node; runtime/distributed shows it as
// RedlockNodeStatus.
type NodeStatus struct {
	URL       string // password redacted
	Reachable bool
	Contacted bool
	Primary   bool
	Failures  uint64
	LastError string // redacted
}

// Status describes the backend for the coordinator's /status.
func (b *Backend) Status() Status {
	st := Status{
		Quorum:             b.quorum,
		Nodes:              make([]NodeStatus, len(b.nodes)),
		FailedAcquisitions: b.failedAcquisitions.Load(),
		LateAcquisitions:   b.lateAcquisitions.Load(),
		LostRenewals:       b.lostRenewals.Load(),
		Reseated:           b.reseated.Load(),
		NodeTimeout:        b.nodeTimeout.String(),
		Validity:           b.validity.String(),
		ClockDriftFactor:   b.s.ClockDriftFactor,
	}
	for i, n := range b.nodes {
		ns := NodeStatus{
			URL:       n.url.Redacted,
			Reachable: n.reachable.Load(),
			Contacted: n.contacted.Load(),
			Primary:   n.isPrimary.Load(),
			Failures:  n.failures.Load(),
		}
		if msg := n.lastError.Load(); msg != nil {
			ns.LastError = *msg
		}
		if ns.Reachable {
			st.ReachableNodes++
		}
		st.Nodes[i] = ns
	}
	return st
}
