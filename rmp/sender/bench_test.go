package sender

import (
	"strconv"
	"testing"
	"time"
)

func benchConfig() Config {
	cfg := testConfig()
	cfg.Limits = Limits{MaxPending: 1 << 30, MaxPendingBytes: 1 << 40, MaxPendingPerDest: 1 << 30, MaxPendingBytesPerDest: 1 << 40}
	return cfg
}

var benchPayload = make([]byte, 512)

// BenchmarkSubmit: one message into an open keyed group (store + first
// transmission effects).
func BenchmarkSubmit(b *testing.B) {
	s, err := New(benchConfig())
	if err != nil {
		b.Fatal(err)
	}
	sub := Submission{To: "http://r/", GroupKey: "k", Flags: ackReq, Payload: benchPayload, Expiry: t0.Add(24 * time.Hour)}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
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
		rd := s.Replies(t0, []ReplyEntry{ack(gid, 0, 999)})
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
