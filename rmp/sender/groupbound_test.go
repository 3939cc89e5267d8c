package sender

import (
	"errors"
	"testing"
)

// storeBatchMutations is store.DefaultMaxBatchMutations (the sender may
// not import store: internal/archtest).
const storeBatchMutations = 1 << 16

// MaxPendingPerGroup refuses the message that would exceed it with
// ErrBoundsFull (other groups are unaffected), and at the default bound an
// operator abort of a full ordered group — every message failed at once
// (D16, R28) — fits one store batch (#18 item 1).
func TestMaxPendingPerGroup(t *testing.T) {
	cfg := testConfig()
	cfg.Limits.MaxPendingPerGroup = 3
	h := newHarness(t, cfg)
	h.hold = true
	for range 3 {
		h.submit(Submission{GroupKey: "k", Flags: ordered})
	}
	if err := h.submitErr(Submission{GroupKey: "k", Flags: ordered}); !errors.Is(err, ErrBoundsFull) {
		t.Fatalf("the fourth message of a group bounded at 3: %v", err)
	}
	h.submit(Submission{GroupKey: "other", Flags: ordered})

	big := testConfig()
	h = newHarness(t, big)
	h.hold = true
	def := DefaultLimits().MaxPendingPerGroup
	var ref MessageRef
	for range def {
		ref = h.submit(Submission{GroupKey: "full", Flags: ordered})
	}
	if err := h.submitErr(Submission{GroupKey: "full", Flags: ordered}); !errors.Is(err, ErrBoundsFull) {
		t.Fatalf("message %d of a group at the default bound: %v", def+1, err)
	}
	rd := h.s.Abort(h.now, ref.GroupID)
	if n := len(rd.Persist); n == 0 || n > storeBatchMutations {
		t.Fatalf("aborting %d pending messages makes a batch of %d mutations; the store takes %d", def, n, storeBatchMutations)
	}
	if len(rd.Notify) != def {
		t.Fatalf("%d outcomes, want %d group-aborted", len(rd.Notify), def)
	}
}
