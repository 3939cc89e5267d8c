package gateway

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/admin"
)

// The overview's charts (#21): the counters sampled into one bucket per
// minute of the gateway's clock, the last hour kept in memory.
const (
	statsMinutes = 60
	// statsSample is how often (wall clock) the counters are read besides
	// each GET /v1/stats.
	statsSample = 5 * time.Second
)

// counts are the counters the charts show.
type counts struct {
	Submitted    uint64 `json:"submitted"`
	Accepted     uint64 `json:"accepted"`
	Delivered    uint64 `json:"delivered"`
	Acknowledged uint64 `json:"acknowledged"`
	Failed       uint64 `json:"failed"`
}

// sub is c - o per counter, 0 where a counter went down (a shard handed
// over with -store etcd takes its counts with it).
func (c counts) sub(o counts) counts {
	d := func(a, b uint64) uint64 {
		if a < b {
			return 0
		}
		return a - b
	}
	return counts{d(c.Submitted, o.Submitted), d(c.Accepted, o.Accepted), d(c.Delivered, o.Delivered),
		d(c.Acknowledged, o.Acknowledged), d(c.Failed, o.Failed)}
}

func (c *counts) add(o counts) {
	c.Submitted += o.Submitted
	c.Accepted += o.Accepted
	c.Delivered += o.Delivered
	c.Acknowledged += o.Acknowledged
	c.Failed += o.Failed
}

func countsOf(m *admin.Metrics) counts {
	c := counts{Submitted: m.Submitted, Accepted: m.Accepted, Delivered: m.Delivered}
	for l, v := range m.Outcomes {
		switch l.Outcome {
		case "acknowledged":
			c.Acknowledged += v
		case "failed":
			c.Failed += v
		}
	}
	return c
}

// throughput is a ring of per-minute counts. Invariant: ring[m %
// statsMinutes] holds minute m for the statsMinutes minutes up to minute.
type throughput struct {
	mu      sync.Mutex
	started bool
	minute  int64 // Unix minute of the newest bucket
	prev    counts
	ring    [statsMinutes]counts
}

func slot(minute int64) int { return int(((minute % statsMinutes) + statsMinutes) % statsMinutes) }

func unixMinute(t time.Time) int64 {
	s := t.Unix()
	if s < 0 {
		return (s - 59) / 60
	}
	return s / 60
}

// observe books the growth of the counters since the last observation into
// now's minute; a clock set back books into the newest minute.
func (t *throughput) observe(now time.Time, total counts) {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := unixMinute(now)
	if !t.started {
		t.started, t.minute, t.prev = true, m, total
		return
	}
	if m > t.minute {
		for i := t.minute + 1; i <= m && i <= t.minute+statsMinutes; i++ {
			t.ring[slot(i)] = counts{}
		}
		t.minute = m
	}
	t.ring[slot(t.minute)].add(total.sub(t.prev))
	t.prev = total
}

// MinuteJSON is one minute of GET /v1/stats: the counts booked in the
// minute that starts at At.
type MinuteJSON struct {
	At string `json:"at"`
	counts
}

// minutes returns the last statsMinutes minutes, oldest first.
func (t *throughput) minutes() []MinuteJSON {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]MinuteJSON, statsMinutes)
	for i := range out {
		m := t.minute - statsMinutes + 1 + int64(i)
		out[i] = MinuteJSON{At: apiTime(time.Unix(m*60, 0)), counts: t.ring[slot(m)]}
	}
	return out
}

// startStats takes the counters' baseline (what a recovered engine counts
// is not this hour's) and samples them until stopStats.
func (g *Gateway) startStats() {
	g.stats = &throughput{}
	g.readStats(g.opts.Context)
	g.statsStop = make(chan struct{})
	go g.sampleStats(g.statsStop)
}

func (g *Gateway) stopStats() {
	g.statsOnce.Do(func() {
		if g.statsStop != nil {
			close(g.statsStop)
		}
	})
}

// sampleStats reads the counters every statsSample until stop closes.
func (g *Gateway) sampleStats(stop <-chan struct{}) {
	every(statsSample, stop, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), statsSample)
		g.readStats(ctx)
		cancel()
		return true
	})
}

// statsJSON is the body of GET /v1/stats.
type statsJSON struct {
	Now        string         `json:"now"`
	Minutes    []MinuteJSON   `json:"minutes"`
	Totals     totalsJSON     `json:"totals"`
	Pending    int            `json:"pending"`
	Held       int            `json:"held"`
	OpenGroups map[string]int `json:"openGroups"`
	Faults     []faultCount   `json:"faults"`
	Store      storeHealth    `json:"store"`
}

type totalsJSON struct {
	counts
	Discarded  uint64 `json:"discarded"`
	Duplicates uint64 `json:"duplicates"`
	Retries    uint64 `json:"retries"`
}

type faultCount struct {
	Code      string `json:"code"`
	Direction string `json:"direction"`
	Count     uint64 `json:"count"`
}

// storeHealth is what /healthz says: ok while every node's store is open.
type storeHealth struct {
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

// readStats sums the nodes' metrics, books them into the ring and returns
// the whole answer; a node that cannot answer makes the store unhealthy.
func (g *Gateway) readStats(ctx context.Context) statsJSON {
	m := admin.Metrics{Outcomes: map[admin.OutcomeLabel]uint64{}}
	var gs gauges
	health := storeHealth{OK: true}
	for _, sn := range g.nodes() {
		if err := sn.node.Err(); err != nil {
			health = storeHealth{Error: err.Error()}
			continue
		}
		err := sn.node.Admin(ctx, func(a admin.Engine, _ time.Time) {
			addMetrics(&m, a.Metrics())
			gs.add(readGauges(a))
		})
		if err != nil {
			health = storeHealth{Error: err.Error()}
		}
	}
	now := g.Now()
	c := countsOf(&m)
	if health.OK {
		g.stats.observe(now, c)
	}
	st := statsJSON{
		Now: apiTime(now), Minutes: g.stats.minutes(),
		Totals:  totalsJSON{counts: c, Discarded: m.Discarded, Duplicates: m.Duplicates, Retries: m.Retries},
		Pending: m.Pending, Held: gs.held,
		OpenGroups: map[string]int{"receiver": gs.receivingGroup, "sender": gs.sendingGroups},
		Faults:     []faultCount{},
		Store:      health,
	}
	for _, code := range faults.All() { // in the codes' order
		if int(code) >= len(m.FaultsSent) {
			continue
		}
		if v := m.FaultsSent[code]; v > 0 {
			st.Faults = append(st.Faults, faultCount{code.String(), "sent", v})
		}
		if v := m.FaultsReceived[code]; v > 0 {
			st.Faults = append(st.Faults, faultCount{code.String(), "received", v})
		}
	}
	return st
}

func (g *Gateway) handleStats(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, g.readStats(r.Context()))
}
