package rmp_test

// Scale benchmarks: heap per idle open group and restart time, with 100,000
// open groups. They drive pure Engines (no HTTP, no goroutines) joined by
// hand, so each runs in seconds; run them with -benchtime 1x.

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/rmp"
	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/rmp/outbound"
	"github.com/wsrkit/wsrkit/soap"
	"github.com/wsrkit/wsrkit/store/memstore"
	"github.com/wsrkit/wsrkit/store/pebblestore"
)

const (
	scaleGroups = 100_000
	scaleHeld   = 10_000
)

var scaleNow = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// engineLink joins a sending and a receiving Engine in process: Sends go to
// the receiver's Receive, Answers back to SendResult, deliveries are taken
// at once and outcomes handled at once. persist, when set, gets every
// receiver Persist (the sender's is dropped).
type engineLink struct {
	s, r    *rmp.Engine
	persist func([]group.Mutation) error
	token   uint64
}

// settle runs the exchange until neither engine has effects left.
func (l *engineLink) settle(tb testing.TB) {
	for l.s.HasReady() || (l.r != nil && l.r.HasReady()) {
		if l.r != nil && l.r.HasReady() {
			l.settleReceiver(tb, nil)
		}
		if !l.s.HasReady() {
			continue
		}
		rd := l.s.Ready()
		l.s.Advance()
		for _, o := range rd.Notify {
			l.s.OutcomeHandled(scaleNow, o.ID)
		}
		for _, out := range rd.Sends {
			l.token++
			l.r.Receive(scaleNow, l.token, out.Post.ContentType, out.Post.Body)
			var ans *rmp.Answer
			l.settleReceiver(tb, func(a rmp.Answer) { ans = &a })
			if ans == nil || ans.Status != 200 {
				tb.Fatalf("no 200 answer to %v: %+v", out.Ref, ans)
			}
			l.s.SendResult(scaleNow, out.Ref, outbound.PostResult{Status: ans.Status, ContentType: ans.ContentType, Body: ans.Body}, nil)
		}
	}
}

// settleReceiver applies the receiver's Readies, taking every delivery.
func (l *engineLink) settleReceiver(tb testing.TB, answer func(rmp.Answer)) {
	for l.r.HasReady() {
		rd := l.r.Ready()
		if l.persist != nil {
			if err := l.persist(rd.Persist); err != nil {
				tb.Fatal(err)
			}
		}
		l.r.Advance()
		for _, a := range rd.Answers {
			if answer != nil {
				answer(a)
			}
		}
		for _, d := range rd.Deliver {
			l.r.Taken(scaleNow, d.Ref)
		}
	}
}

func scaleEngine(tb testing.TB, instance string) *rmp.Engine {
	var cfg rmp.Config
	cfg.Sender.InstanceID = instance
	cfg.Receiver.MaxGroups = 2 * scaleGroups
	cfg.Sender.Limits.MaxGroups = 2 * scaleGroups
	e, err := rmp.LoadEngine(cfg, memstore.New(memstore.Options{}))
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

// heapInUse is the live heap after two collections.
func heapInUse() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkIdleGroupMemory opens 100,000 ordered exactly-once groups with
// one acknowledged and delivered message each (no last message, expiry an
// hour away) and reports the live heap per idle open group at the receiver
// and at the sender (goal ≤ 512 B at the receiver).
func BenchmarkIdleGroupMemory(b *testing.B) {
	for b.Loop() {
		base := heapInUse()
		l := &engineLink{s: scaleEngine(b, "mem"), r: scaleEngine(b, "mem-r")}
		for g := range scaleGroups {
			_, err := l.s.Submit(scaleNow, rmp.Submission{
				To: "http://r.test/rmp", GroupKey: fmt.Sprintf("key-%06d", g), Lifetime: time.Hour,
				Flags:   group.Flags{AckRequested: true, DuplicateElimination: true, MessageOrder: true},
				Pattern: group.ReplyResponse, Payload: benchBody,
			})
			if err != nil {
				b.Fatal(err)
			}
			if g%1000 == 999 {
				l.settle(b)
			}
		}
		l.settle(b)
		rs, ss := l.r.Admin().ReceiverStats(), l.s.Admin().Metrics()
		if rs.OpenGroups != scaleGroups || rs.HeldMessages != 0 || rs.PendingDeliveries != 0 || ss.SenderGroups != scaleGroups || ss.Pending != 0 {
			b.Fatalf("not idle: receiver %+v, sender groups %d pending %d", rs, ss.SenderGroups, ss.Pending)
		}
		both := heapInUse()
		l.s = nil
		recvOnly := heapInUse()
		if path := os.Getenv("WSRKIT_BENCH_HEAPPROFILE"); path != "" {
			writeHeapProfile(b, path) // what the receiver's idle groups hold
		}
		runtime.KeepAlive(l.r)
		b.ReportMetric(float64(recvOnly-base)/scaleGroups, "recv-B/group")
		b.ReportMetric(float64(both-recvOnly)/scaleGroups, "send-B/group")
	}
}

// buildRestartStore writes, through a receiving Engine, 100,000 open
// ordered groups into a pebble store in dir: 90,000 with number 0 accepted
// and delivered, 10,000 holding number 1 while 0 is missing (held, D14).
func buildRestartStore(b *testing.B, dir string) {
	st, err := pebblestore.Open(pebblestore.Options{Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	l := &engineLink{r: scaleEngine(b, "restart"), persist: st.Apply}
	for g := range scaleGroups {
		n := uint64(0)
		if g >= scaleGroups-scaleHeld {
			n = 1
		}
		env := benchEnvelope(b, fmt.Sprintf("urn:bench:restart:%06d", g), n)
		l.token++
		l.r.Receive(scaleNow, l.token, soap.ContentTypeSOAP11, env)
		if g%1000 == 999 {
			l.settleReceiver(b, nil)
		}
	}
	l.settleReceiver(b, nil)
	if err := st.Close(); err != nil {
		b.Fatal(err)
	}
}

func writeHeapProfile(b *testing.B, path string) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.WriteHeapProfile(f); err != nil {
		b.Fatal(err)
	}
}

func dirBytes(dir string) int64 {
	var n int64
	filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

// BenchmarkRestart100kGroups measures a restart: open the pebble store
// holding 100,000 open groups and 10,000 held messages and rebuild the
// Engine with LoadEngine (goal ≤ 2 s). ns/op is one restart.
func BenchmarkRestart100kGroups(b *testing.B) {
	dir := b.TempDir()
	buildRestartStore(b, dir)
	disk := dirBytes(dir)
	var cfg rmp.Config
	cfg.Sender.InstanceID = "restart"
	cfg.Receiver.MaxGroups = 2 * scaleGroups
	b.ResetTimer()
	for b.Loop() {
		st, err := pebblestore.Open(pebblestore.Options{Dir: dir})
		if err != nil {
			b.Fatal(err)
		}
		e, err := rmp.LoadEngine(cfg, st)
		if err != nil {
			b.Fatal(err)
		}
		rs := e.Admin().ReceiverStats()
		if rs.OpenGroups != scaleGroups || rs.HeldMessages != scaleHeld {
			b.Fatalf("loaded %+v; want %d open groups, %d held", rs, scaleGroups, scaleHeld)
		}
		if err := st.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/restart")
	b.ReportMetric(float64(disk)/scaleGroups, "disk-B/group")
}
