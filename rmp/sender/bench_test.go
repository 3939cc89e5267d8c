package sender

import (
	"strconv"
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
)

func benchConfig() Config {
	cfg := testConfig()
	cfg.Limits = Limits{MaxPending: 1 << 30, MaxPendingBytes: 1 << 40, MaxPendingPerDest: 1 << 30, MaxPendingBytesPerDest: 1 << 40}
	return cfg
}

var benchPayload = make([]byte, 512)

// BenchmarkSubmit: one message into an open keyed group (store + first
// transmission effects). Nothing is acknowledged, so the key moves on to
// a new group each time one is full (MaxPendingPerGroup, ec9bd09): one
// group opened per 10,000 messages.
func BenchmarkSubmit(b *testing.B) {
	s, err := New(benchConfig())
	if err != nil {
		b.Fatal(err)
	}
	perGroup := s.cfg.Limits.MaxPendingPerGroup
	sub := Submission{To: "http://r/", Flags: ackReq, Payload: benchPayload, Expiry: t0.Add(24 * time.Hour)}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%perGroup == 0 {
			sub.GroupKey = "k" + strconv.Itoa(i/perGroup)
		}
		if _, _, err := s.Submit(t0, sub); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAckRange1000: one SequenceReplies range acknowledging 1000
// pending messages (outcomes, outbound deletes, acked-run delta).
func BenchmarkAckRange1000(b *testing.B) {
	b.ReportAllocs()
	sub := Submission{To: "http://r/", GroupKey: "k", Flags: ackReq, Payload: benchPayload, Expiry: t0.Add(24 * time.Hour), Last: false}
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		s, _ := New(benchConfig())
		var gid string
		for j := 0; j < 1000; j++ {
			r, _, err := s.Submit(t0, sub)
			if err != nil {
				b.Fatal(err)
			}
			gid = r.GroupID
		}
		b.StartTimer()
		rd := s.Replies(t0, []group.Reply{ack(gid, 0, 999)})
		if len(rd.Notify) != 1000 {
			b.Fatalf("acked %d", len(rd.Notify))
		}
	}
}

// BenchmarkTick: a steady state where every Tick finds `due` messages due
// for a resend among `pending` (phases spread evenly over one interval).
// Tick cost is O(due · log pending): the pending=100000/due=1000 and
// pending=10000/due=1000 rows differ only in pending.
func BenchmarkTick(b *testing.B) {
	for _, c := range []struct{ pending, due int }{{10000, 100}, {10000, 1000}, {100000, 1000}} {
		b.Run("pending="+strconv.Itoa(c.pending)+"/due="+strconv.Itoa(c.due), func(b *testing.B) {
			cfg := benchConfig()
			interval := 100 * time.Second
			cfg.Retry = RetryPolicy{Interval: interval, Backoff: 1, MaxInterval: interval, MaxRetries: 1 << 30}
			s, err := New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			phase := interval / time.Duration(c.pending)
			for i := 0; i < c.pending; i++ {
				sub := Submission{To: "http://r/", GroupKey: "k" + strconv.Itoa(i/1000), Flags: ackReq, Payload: benchPayload, Expiry: t0.Add(1000 * time.Hour)}
				if _, _, err := s.Submit(t0.Add(time.Duration(i)*phase), sub); err != nil {
					b.Fatal(err)
				}
			}
			step := interval * time.Duration(c.due) / time.Duration(c.pending)
			now := t0.Add(interval)
			sent := 0
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				now = now.Add(step)
				rd := s.Tick(now)
				sent += len(rd.Send)
			}
			b.StopTimer()
			if b.N > 3 && sent/b.N < c.due*9/10 {
				b.Fatalf("only %d sends per tick, want ~%d", sent/b.N, c.due)
			}
			b.ReportMetric(float64(sent)/float64(b.N), "sends/tick")
		})
	}
}

// BenchmarkResendPersist: 1000 messages of 512 bytes resent on one Tick.
// It reports the KindOutbound bytes each resend persists (the retry-state
// record) beside the full outbound record a resend used to rewrite
// (full-B/resend), measured on the same messages in the same run.
func BenchmarkResendPersist(b *testing.B) {
	cfg := benchConfig()
	cfg.Retry = RetryPolicy{Interval: time.Second, Backoff: 1, MaxInterval: time.Second, MaxRetries: 1 << 30}
	s, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	sub := Submission{To: "http://r/", GroupKey: "k", Flags: ackReq, Payload: benchPayload, Expiry: t0.Add(1000 * time.Hour)}
	for i := 0; i < 1000; i++ {
		if _, _, err := s.Submit(t0, sub); err != nil {
			b.Fatal(err)
		}
	}
	now := t0
	var written, full, sends int
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		now = now.Add(time.Second)
		rd := s.Tick(now)
		sends += len(rd.Send)
		for _, m := range rd.Persist {
			if m.Op == group.OpPut && m.Key.Kind == group.KindOutbound {
				written += len(m.Value)
			}
		}
	}
	b.StopTimer()
	if sends < b.N*1000 {
		b.Fatalf("%d sends in %d ticks", sends, b.N)
	}
	for _, g := range s.groups {
		for _, m := range g.pending {
			full += len(encodeOutbound(nil, m))
		}
	}
	b.ReportMetric(float64(written)/float64(sends), "persist-B/resend")
	b.ReportMetric(float64(full)/1000, "full-B/resend")
}

// BenchmarkLateFaultPoll (#23): one late-fault poll of a destination with
// 64 groups of 100 acknowledged messages each: the firing (one PollRequest
// of 64 ranges), its clean answer applied with Replies, and PollResult.
// Each iteration is one poll interval later, so the window stays open.
func BenchmarkLateFaultPoll(b *testing.B) {
	cfg := benchConfig()
	cfg.PollInterval, cfg.PollIntervalMax = time.Second, time.Second
	s, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	var acks []group.Reply
	for g := range 64 {
		sub := Submission{To: "http://r/", GroupKey: "g" + strconv.Itoa(g), Flags: ackReq, Payload: benchPayload, Expiry: t0.Add(24 * time.Hour)}
		var gid string
		for range 100 {
			r, _, err := s.Submit(t0, sub)
			if err != nil {
				b.Fatal(err)
			}
			gid = r.GroupID
		}
		acks = append(acks, ack(gid, 0, 99))
	}
	s.Replies(t0, acks)
	now := t0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		now = now.Add(time.Second)
		rd := s.Tick(now)
		if len(rd.Polls) != 1 || len(rd.Polls[0].Refs) != 64 {
			b.Fatalf("polls %+v", rd.Polls)
		}
		s.Replies(now, acks)
		s.PollResult(now, rd.Polls[0].ID, true)
	}
}

// BenchmarkSubmitAmong100kGroups is BenchmarkSubmit into one of 100,000
// open keyed groups in turn: what a busy sender pays per message, its
// Listing's upkeep included (#21).
func BenchmarkSubmitAmong100kGroups(b *testing.B) {
	const groups = 100_000
	s, err := New(benchConfig())
	if err != nil {
		b.Fatal(err)
	}
	subs := make([]Submission, groups)
	for i := range subs {
		subs[i] = Submission{To: "http://r/", GroupKey: "k" + strconv.Itoa((i*7919)%groups), Flags: ackReq, Payload: benchPayload, Expiry: t0.Add(24 * time.Hour)}
		if _, _, err := s.Submit(t0, subs[i]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		if _, _, err := s.Submit(t0, subs[i%groups]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
