package receiver

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/beevik/etree"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// BenchmarkEtreeReadOnly is the ceiling the receiver is measured against:
// etree ReadFromBytes of a 1.5 KB SOAP 1.1 reliable request (perf-limits.md
// §1). The receiver's cost per accepted message must stay under 25 % of it.
func BenchmarkEtreeReadOnly(b *testing.B) {
	env, err := os.ReadFile("testdata/request-soap11.xml")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(env)))
	b.ReportAllocs()
	for b.Loop() {
		doc := etree.NewDocument()
		if err := doc.ReadFromBytes(env); err != nil {
			b.Fatal(err)
		}
	}
}

func benchReceiver(b *testing.B, cfg Config) *Receiver {
	r, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return r
}

func takeAll(r *Receiver, now time.Time, rd Ready) {
	for len(rd.Deliver) > 0 {
		ref := rd.Deliver[0].Ref
		rd = r.Taken(now, ref)
	}
}

// BenchmarkInOrder: accept + deliver + Taken of the next message of a group
// that already holds 1,000,000 numbers.
func BenchmarkInOrder(b *testing.B) {
	for _, ord := range []bool{false, true} {
		b.Run(fmt.Sprintf("ordered=%v", ord), func(b *testing.B) {
			r := benchReceiver(b, Config{})
			m := seq("mid:bench@example.com", 0)
			m.Flags.MessageOrder = ord
			m.Expiry = t0.Add(1000 * time.Hour)
			now := t0
			n := uint64(0)
			for ; n < 1_000_000; n++ {
				m.Number = n
				takeAll(r, now, r.Message(now, m))
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				m.Number = n
				n++
				rd := r.Message(now, m)
				if len(rd.Deliver) != 1 || rd.Reply == nil {
					b.Fatal("not delivered")
				}
				r.Taken(now, rd.Deliver[0].Ref)
			}
		})
	}
}

// BenchmarkOutOfOrder: accept of an early message of an ordered group that
// holds 1000 messages.
func BenchmarkOutOfOrder(b *testing.B) {
	r := benchReceiver(b, Config{MaxHeldPerGroup: 1 << 20, MaxHeldTotal: 1 << 20})
	m := seq("mid:bench@example.com", 0, ordered)
	m.Expiry = t0.Add(1000 * time.Hour)
	now := t0
	base := uint64(0)
	fill := func() {
		for k := uint64(2); k < 1002; k++ {
			m.Number = base + k
			r.Message(now, m)
		}
	}
	takeAll(r, now, r.Message(now, m))
	fill()
	next := base + 1002
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		m.Number = next
		next++
		if rd := r.Message(now, m); rd.Reply == nil {
			b.Fatal("not acked")
		}
		if i++; i%1000 == 0 {
			b.StopTimer()
			m.Number = base + 1
			takeAll(r, now, r.Message(now, m)) // releases everything
			base = next - 1
			m.Number = base
			takeAll(r, now, r.Message(now, m))
			fill()
			next = base + 1002
			b.StartTimer()
		}
	}
}

// BenchmarkDuplicate: a resent copy of an accepted message.
func BenchmarkDuplicate(b *testing.B) {
	r := benchReceiver(b, Config{})
	m := seq("mid:bench@example.com", 0)
	now := t0
	for n := uint64(0); n < 100; n++ {
		m.Number = n
		takeAll(r, now, r.Message(now, m))
	}
	m.Number = 50
	b.ReportAllocs()
	for b.Loop() {
		if rd := r.Message(now, m); rd.Reply == nil || len(rd.Deliver) != 0 {
			b.Fatal("not a re-ack")
		}
	}
}

// BenchmarkPoll100: a PollRequest naming 100 groups of 100 messages with a
// gap and a fault each.
func BenchmarkPoll100(b *testing.B) {
	r := benchReceiver(b, Config{})
	now := t0
	var p PollRequest
	for g := 0; g < 100; g++ {
		id := fmt.Sprintf("mid:g%03d@example.com", g)
		m := seq(id, 0, pollP)
		for n := uint64(0); n < 100; n++ {
			if n == 50 {
				continue
			}
			m.Number = n
			takeAll(r, now, r.Message(now, m))
		}
		p.Refs = append(p.Refs, group.PollRef{GroupID: id, Ranges: []group.Range{{From: 0, To: 199}}})
	}
	b.ReportAllocs()
	for b.Loop() {
		if rd := r.Poll(now, p); rd.PollAnswer == nil || len(rd.PollAnswer.Entries) != 100 {
			b.Fatal("bad answer")
		}
	}
}

// BenchmarkInOrderAmong100kGroups is BenchmarkInOrder's unordered step in
// one of 100,000 groups, which receive their messages in turn: what a
// busy receiver pays per message, its Listing's upkeep included (#21).
func BenchmarkInOrderAmong100kGroups(b *testing.B) {
	const groups = 100_000
	r := benchReceiver(b, Config{MaxGroups: 2 * groups})
	ms := make([]Message, groups)
	for i := range ms {
		ms[i] = seq(fmt.Sprintf("mid:%06d@example.com", (i*7919)%groups), 0)
		ms[i].Expiry = t0.Add(1000 * time.Hour)
		takeAll(r, t0, r.Message(t0, ms[i]))
	}
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		m := &ms[i%groups]
		m.Number++
		i++
		rd := r.Message(t0, *m)
		if len(rd.Deliver) != 1 {
			b.Fatal("not delivered")
		}
		r.Taken(t0, rd.Deliver[0].Ref)
	}
}
