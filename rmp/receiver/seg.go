package receiver

import (
	"fmt"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// addSeg adds a stored received segment to s in one step, whatever its
// length. Segments of one generation are disjoint when written
// (addReceived, compactSegs), so an overlap means a corrupt store.
func addSeg(s *group.SeqSet, r group.Range) error {
	added, err := s.AddRange(r)
	if err != nil {
		return fmt.Errorf("%w: received segment %d..%d: %v", ErrCorrupt, r.From, r.To, err)
	}
	if added != r.Len() {
		return fmt.Errorf("%w: received segment %d..%d overlaps another", ErrCorrupt, r.From, r.To)
	}
	return nil
}
