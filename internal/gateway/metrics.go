package gateway

import (
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/admin"
)

// handleMetrics writes the engine's counters in the Prometheus text
// format (version 0.0.4); every name starts with wsrkit_.
func (g *Gateway) handleMetrics(w http.ResponseWriter, r *http.Request) {
	// With -store etcd: the sums over the shards this instance holds.
	m := admin.Metrics{Outcomes: map[admin.OutcomeLabel]uint64{}}
	var gs gauges
	for _, sn := range g.nodes() {
		err := sn.node.Admin(r.Context(), func(a admin.Engine, _ time.Time) {
			addMetrics(&m, a.Metrics())
			gs.add(readGauges(a))
		})
		if err != nil {
			writeError(w, http.StatusServiceUnavailable, err.Error())
			return
		}
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	var notAllowed uint64
	if g.peerAllow != nil {
		notAllowed = g.peerAllow.refused.Load()
	}
	writeMetrics(w, &m, gs, g.refusedForwards.Load(), notAllowed)
	g.place.writeMetrics(g, w)
}

// gauges are the current sizes the engine's views report.
type gauges struct {
	held                          int
	sendingGroups, receivingGroup int
}

func (g *gauges) add(o gauges) {
	g.held += o.held
	g.sendingGroups += o.sendingGroups
	g.receivingGroup += o.receivingGroup
}

// addMetrics adds one node's counters and gauges to sum.
func addMetrics(sum *admin.Metrics, m admin.Metrics) {
	sum.Accepted += m.Accepted
	sum.Delivered += m.Delivered
	sum.Duplicates += m.Duplicates
	sum.Discarded += m.Discarded
	sum.Submitted += m.Submitted
	sum.Retries += m.Retries
	sum.Commits += m.Commits
	sum.ForeignPeer += m.ForeignPeer
	sum.ForeignPeerPolls += m.ForeignPeerPolls
	sum.ForeignPeerReplies += m.ForeignPeerReplies
	sum.GroupNotAllowed += m.GroupNotAllowed
	sum.GroupNotAllowedPolls += m.GroupNotAllowedPolls
	for i := range sum.FaultsSent {
		sum.FaultsSent[i] += m.FaultsSent[i]
		sum.FaultsReceived[i] += m.FaultsReceived[i]
	}
	for l, v := range m.Outcomes {
		sum.Outcomes[l] += v
	}
	sum.SenderGroups += m.SenderGroups
	sum.Pending += m.Pending
}

func counter(w io.Writer, name, help string, v uint64) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s counter\n%s %d\n", name, help, name, name, v)
}

func gauge(w io.Writer, name, help string, v int) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s gauge\n%s %d\n", name, help, name, name, v)
}

// writeMetrics writes m and gs; refusedForwards counts the forwarded
// requests refused, notAllowed the requests -peer-allow refused (403).
func writeMetrics(w io.Writer, m *admin.Metrics, gs gauges, refusedForwards, notAllowed uint64) {
	counter(w, "wsrkit_messages_submitted_total", "Messages accepted from the producer.", m.Submitted)
	counter(w, "wsrkit_messages_accepted_total", "Reliable messages accepted by the receiving side (not refused, not duplicates).", m.Accepted)
	counter(w, "wsrkit_messages_delivered_total", "Messages taken by the consumer.", m.Delivered)
	counter(w, "wsrkit_messages_discarded_total", "Accepted messages that will never be delivered (D12, D14).", m.Discarded)
	counter(w, "wsrkit_duplicates_total", "Duplicates recognised (D18).", m.Duplicates)
	counter(w, "wsrkit_retries_total", "Resends by the sending side (D26).", m.Retries)
	counter(w, "wsrkit_store_commits_total", "Synced store batches committed, each carrying the effects of one or more batches of inputs (D8: nothing is answered or sent before its commit).", m.Commits)

	fmt.Fprint(w, "# HELP wsrkit_faults_total Faults sent by the receiving side and received by the sending side, by code.\n# TYPE wsrkit_faults_total counter\n")
	for _, c := range faults.All() {
		if int(c) >= len(m.FaultsSent) {
			continue
		}
		if v := m.FaultsSent[c]; v > 0 {
			fmt.Fprintf(w, "wsrkit_faults_total{code=%q,direction=\"sent\"} %d\n", c.String(), v)
		}
		if v := m.FaultsReceived[c]; v > 0 {
			fmt.Fprintf(w, "wsrkit_faults_total{code=%q,direction=\"received\"} %d\n", c.String(), v)
		}
	}

	fmt.Fprint(w, "# HELP wsrkit_refused_total Requests refused for who sent them: a message into, or a PollRequest reference to, a group bound to another peer identity, or an RM-Reply entry about a sending group from another party than its destination (-bind-groups-to-peer); a request marked forwarded by no authenticated instance (-store etcd); a request from an identity -peer-allow does not list (403), a message into or a PollRequest reference to a groupId outside its sender's -peer-allow prefixes.\n# TYPE wsrkit_refused_total counter\n")
	fmt.Fprintf(w, "wsrkit_refused_total{reason=\"foreign-peer\"} %d\n", m.ForeignPeer)
	fmt.Fprintf(w, "wsrkit_refused_total{reason=\"foreign-peer-poll\"} %d\n", m.ForeignPeerPolls)
	fmt.Fprintf(w, "wsrkit_refused_total{reason=\"foreign-peer-reply\"} %d\n", m.ForeignPeerReplies)
	fmt.Fprintf(w, "wsrkit_refused_total{reason=\"forward-unauthenticated\"} %d\n", refusedForwards)
	fmt.Fprintf(w, "wsrkit_refused_total{reason=\"peer-not-allowed\"} %d\n", notAllowed)
	fmt.Fprintf(w, "wsrkit_refused_total{reason=\"group-not-allowed\"} %d\n", m.GroupNotAllowed)
	fmt.Fprintf(w, "wsrkit_refused_total{reason=\"group-not-allowed-poll\"} %d\n", m.GroupNotAllowedPolls)

	fmt.Fprint(w, "# HELP wsrkit_outcomes_total Outcomes handed to the producer (D27).\n# TYPE wsrkit_outcomes_total counter\n")
	lines := make([]string, 0, len(m.Outcomes))
	for l, v := range m.Outcomes {
		lines = append(lines, fmt.Sprintf("wsrkit_outcomes_total{outcome=%q,reason=%q} %d\n", l.Outcome, metricReason(l), v))
	}
	sort.Strings(lines) // no map order reaches the output
	fmt.Fprint(w, strings.Join(lines, ""))

	gauge(w, "wsrkit_pending_messages", "Submitted messages not yet acknowledged.", m.Pending)
	gauge(w, "wsrkit_held_messages", "Out-of-order messages held by the receiving side (R48).", gs.held)
	fmt.Fprint(w, "# HELP wsrkit_open_groups Groups held in state, by role.\n# TYPE wsrkit_open_groups gauge\n")
	fmt.Fprintf(w, "wsrkit_open_groups{role=\"receiver\"} %d\n", gs.receivingGroup)
	fmt.Fprintf(w, "wsrkit_open_groups{role=\"sender\"} %d\n", gs.sendingGroups)
}

// metricReason maps the engine's reason label onto the JSON reason strings.
func metricReason(l admin.OutcomeLabel) string {
	switch l.Reason {
	case "none":
		return ""
	case "fault-received":
		return "fault"
	}
	return l.Reason
}

func readGauges(a admin.Engine) gauges {
	st := a.ReceiverStats()
	m := a.Metrics()
	return gauges{held: st.HeldMessages, receivingGroup: st.Groups, sendingGroups: m.SenderGroups}
}
