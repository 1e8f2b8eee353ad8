package distributed

import "strconv"

// keys builds every Redis key the coordinator uses. The keys of one pipeline
// share the hash tag {pipelineID}, so each Lua script touches a single Redis
// Cluster slot; KeyPrefix may not contain braces, so the pipeline id is
// always the tag.
//
//	<prefix>lease:{<pipeline>}   list of one string "<token> <run> <owner>"; PX LeaseTTL
//	<prefix>token:{<pipeline>}   string: the last fencing token and its run, "<token> <run>"
//	<prefix>completed:{<pipeline>}  sorted set: member "slot" scored with the last completed slot; and the run
//	                             history, one compact JSON array per run scored by its end in Unix ms (history_member.go)
//	                             and the failure state, members "fails" and "fail_until" (failures.go)
//	<prefix>failure:{<pipeline>} hash: the last failed run's error, worker and time (Unix ms); failures.go
//	<prefix>deadline:{<pipeline>}  string: the last slot reported as missing its deadline (Unix s); PX FencingKeyTTL, as completed (deadline.go)
//	<prefix>once:{<pipeline>}    string: set when the Once run completed; PX 2×LeaseTTL
//	<prefix>claim:{<pipeline>}:<slot>  string: the replica asking for a slot in a batch; PX 5 s
//	<prefix>backfill:{<pipeline>}  hash: the pipeline's backfill, request and progress (backfill.go); PX BackfillKeep
//	<prefix>epoch:{<pipeline>}   string: on a Cluster, the pipeline's state epoch (Redis time, µs; see epoch.go)
//	<prefix>worker:<worker id>   hash: the worker record; PX 3×HeartbeatInterval
//	<prefix>epoch                string: on one server, the state epoch (Redis time, µs; see epoch.go)
//	<prefix>server               string: the run_id of the server the state was last used on
//	<prefix>preference           sorted set: live coordinator instances ("<worker id>#<hex>") by expiry, Unix ms
//	<prefix>control:backfill     hash: pipeline id → the id of its running backfill (backfill_watch.go)
type keys struct{ prefix string }

func (k keys) tag(pipelineID string) string { return "{" + pipelineID + "}" }

// lease holds the current lease of a pipeline.
func (k keys) lease(pipelineID string) string { return k.prefix + "lease:" + k.tag(pipelineID) }

// token holds a pipeline's last fencing token.
func (k keys) token(pipelineID string) string { return k.prefix + "token:" + k.tag(pipelineID) }

// done holds a pipeline's last completed slot: a sorted set whose one
// member, doneMember, is scored with the slot, so that recording a slot is
// one plain command that never lowers the mark (ZADD … GT) and needs no
// script.
func (k keys) done(pipelineID string) string { return k.prefix + "completed:" + k.tag(pipelineID) }

// doneMember is the member of the done sorted set that carries the slot.
const doneMember = "slot"

// failure holds a pipeline's last failed run's error (failures.go).
func (k keys) failure(pipelineID string) string { return k.prefix + "failure:" + k.tag(pipelineID) }

// deadline holds the last slot of a pipeline reported as missing its
// deadline (deadline.go).
func (k keys) deadline(pipelineID string) string { return k.prefix + "deadline:" + k.tag(pipelineID) }

// once marks a completed Once run.
func (k keys) once(pipelineID string) string { return k.prefix + "once:" + k.tag(pipelineID) }

// claim marks that one replica is asking for a slot (see claimSlots).
func (k keys) claim(pipelineID string, slot int64) string {
	return k.prefix + "claim:" + k.tag(pipelineID) + ":" + strconv.FormatInt(slot, 10)
}

// pipelineEpoch holds a pipeline's state epoch on a Cluster, where a
// script cannot reach a key shared by every pipeline.
func (k keys) pipelineEpoch(pipelineID string) string { return k.prefix + "epoch:" + k.tag(pipelineID) }

// epoch holds the state epoch of one server (see epoch.go).
func (k keys) epoch() string { return k.prefix + "epoch" }

// server names the server the state was last used on, by its run_id.
func (k keys) server() string { return k.prefix + "server" }

// preferenceIndex lists the live coordinator instances, scored by expiry
// (Unix ms), for the preferred-worker view (preference.go).
func (k keys) preferenceIndex() string { return k.prefix + "preference" }

// worker holds a worker's registry record.
func (k keys) worker(workerID string) string { return k.prefix + "worker:" + workerID }

// workerPattern matches every worker record under the prefix, for SCAN.
func (k keys) workerPattern() string { return globEscape(k.prefix+"worker:") + "*" }

// pipelineKeys returns the lease, token, done, backfill, once and Cluster
// epoch keys of a pipeline, in the order the acquire script expects them.
func (k keys) pipelineKeys(pipelineID string) []string {
	return []string{k.lease(pipelineID), k.token(pipelineID), k.done(pipelineID), k.backfill(pipelineID), k.once(pipelineID), k.pipelineEpoch(pipelineID)}
}

// globEscape escapes the characters SCAN MATCH treats specially, so a prefix
// such as "app*:" matches only itself.
func globEscape(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[', ']', '\\':
			out = append(out, '\\')
		}
		out = append(out, s[i])
	}
	return string(out)
}

// keysFor returns the key builder of s's prefix.
func keysFor(s settings) keys { return keys{prefix: s.KeyPrefix} }
