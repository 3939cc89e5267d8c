package sender

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// batchSenders are two Senders given the same inputs: one is asked
// CheckBatch, the other applies the batch one Submit at a time.
func batchSenders(t *testing.T, lim Limits) (*Sender, *Sender) {
	cfg := testConfig()
	cfg.Limits = lim
	a, err := New(cfg)
	noErr(t, err)
	b, err := New(cfg)
	noErr(t, err)
	return a, b
}

var batchSentinels = []error{ErrInvalidSubmission, ErrGroupParams, ErrGroupAborted, ErrBoundsFull}

func sentinel(err error) error {
	for _, s := range batchSentinels {
		if errors.Is(err, s) {
			return s
		}
	}
	return err
}

// randomSubmission draws from a small space so that keys repeat, groups
// close with last and reopen, parameters clash and bounds fill.
func randomSubmission(r *rand.Rand, now time.Time) Submission {
	sub := Submission{
		To:       "http://a.example/rmp",
		GroupKey: []string{"", "k1", "k2", "k3"}[r.IntN(4)],
		Flags:    group.Flags{AckRequested: r.IntN(6) > 0, DuplicateElimination: true},
		Payload:  make([]byte, 1+r.IntN(40)),
		Lifetime: time.Hour,
		Last:     r.IntN(8) == 0,
	}
	if r.IntN(12) == 0 {
		sub.To = "http://b.example/rmp"
	}
	if sub.GroupKey != "" {
		sub.Flags.MessageOrder = r.IntN(15) > 0
		if r.IntN(20) == 0 {
			sub.Timing.Expiry = now.Add(30 * time.Minute) // before the message's: R16
		}
	}
	if r.IntN(25) == 0 {
		sub.To = "" // invalid by itself
	}
	if r.IntN(25) == 0 {
		sub.Pattern = group.ReplyCallback // without ReplyTo: R18
	}
	return sub
}

// CheckBatch accepts a batch exactly when Submit accepts each of its
// submissions in turn, and names the first that Submit refuses, with the
// same kind of refusal; it changes nothing itself (#22: all or nothing).
func TestCheckBatchAgreesWithSubmit(t *testing.T) {
	lim := Limits{MaxPending: 12, MaxPendingBytes: 300, MaxPendingPerDest: 8, MaxPendingBytesPerDest: 200,
		MaxPendingPerGroup: 4, MaxGroups: 9}
	var accepted, refused int
	kinds := map[error]int{}
	for seed := range uint64(400) {
		r := rand.New(rand.NewPCG(seed, 22))
		a, b := batchSenders(t, lim)
		// A prefix both senders apply, so batches meet open groups.
		for range r.IntN(8) {
			sub := randomSubmission(r, t0)
			_, _, errA := a.Submit(t0, sub)
			_, _, errB := b.Submit(t0, sub)
			if (errA == nil) != (errB == nil) {
				t.Fatalf("seed %d: the senders diverged: %v / %v", seed, errA, errB)
			}
		}
		batch := make([]Submission, 1+r.IntN(10))
		for i := range batch {
			batch[i] = randomSubmission(r, t0)
		}
		checked := a.CheckBatch(t0, batch)
		var be *BatchError
		if checked != nil && !errors.As(checked, &be) {
			t.Fatalf("seed %d: CheckBatch error %T %v, want *BatchError", seed, checked, checked)
		}
		first := -1
		var firstErr error
		for i, sub := range batch {
			if _, _, err := b.Submit(t0, sub); err != nil {
				first, firstErr = i, err
				break
			}
		}
		switch {
		case checked == nil && first >= 0:
			t.Fatalf("seed %d: CheckBatch accepted, Submit refused submission %d: %v", seed, first, firstErr)
		case checked != nil && first != be.Index:
			t.Fatalf("seed %d: CheckBatch refused submission %d (%v), Submit refused %d (%v)", seed, be.Index, checked, first, firstErr)
		case checked != nil && sentinel(be.Err) != sentinel(firstErr):
			t.Fatalf("seed %d: CheckBatch %v, Submit %v", seed, be.Err, firstErr)
		case checked == nil:
			accepted++
		default:
			refused++
			kinds[sentinel(firstErr)]++
		}
		// a was only asked: its next submission is numbered as if the
		// batch had never been checked.
		if a.pending != b.pending-countPendingApplied(batch, first) {
			t.Fatalf("seed %d: CheckBatch changed the sender (%d pending, %d expected)", seed, a.pending, b.pending-countPendingApplied(batch, first))
		}
	}
	t.Logf("accepted %d, refused %d: %v", accepted, refused, kinds)
	// The draws must exercise every way a batch fails, and success.
	if accepted < 40 || refused < 40 {
		t.Fatalf("accepted %d, refused %d batches: the draws do not cover both", accepted, refused)
	}
	for _, s := range batchSentinels {
		if kinds[s] == 0 && s != ErrGroupAborted {
			t.Errorf("no batch was refused with %v: %v", s, kinds)
		}
	}
}

// countPendingApplied is how many pending messages the one-at-a-time
// sender gained from the batch: its acknowledged submissions before the
// first refused one (all when first < 0).
func countPendingApplied(batch []Submission, first int) int {
	if first >= 0 {
		batch = batch[:first]
	}
	n := 0
	for _, s := range batch {
		if s.Flags.AckRequested {
			n++
		}
	}
	return n
}

// A group aborted with outcomes not yet handled refuses the batch naming
// the entry with its key; a batch that closes a group with last and goes
// on under the same key opens the next group.
func TestCheckBatchAbortedKeyAndReopen(t *testing.T) {
	h := newHarness(t, testConfig())
	h.hold = true // the abort's outcome stays unhandled
	ref := h.submit(Submission{GroupKey: "k", Flags: ackReq, Payload: []byte("a")})
	h.apply(h.s.Abort(h.now, ref.GroupID))
	to := "http://r.example/rmp"
	err := h.s.CheckBatch(h.now, []Submission{
		{To: to, GroupKey: "other", Flags: ackReq, Payload: []byte("x")},
		{To: to, GroupKey: "k", Flags: ackReq, Payload: []byte("y")},
	})
	var be *BatchError
	if !errors.As(err, &be) || be.Index != 1 || !errors.Is(err, ErrGroupAborted) {
		t.Fatalf("CheckBatch = %v, want submission 1 refused as aborted", err)
	}
	batch := []Submission{
		{To: to, GroupKey: "n", Flags: ackReq, Payload: []byte("0"), Last: true},
		{To: to, GroupKey: "n", Flags: group.Flags{AckRequested: true, MessageOrder: true}, Payload: []byte("0")},
	}
	noErr(t, h.s.CheckBatch(h.now, batch))
	a := h.submit(batch[0])
	b := h.submit(batch[1])
	if a.GroupID == b.GroupID || b.Number != 0 {
		t.Fatalf("after last the key opens a new group: %+v then %+v", a, b)
	}
}
