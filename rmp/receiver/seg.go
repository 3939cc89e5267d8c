package receiver

import (
	"fmt"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// maxSegment bounds one stored received segment: a longer one can only come
// from a corrupt record, and adding it number by number would not end.
const maxSegment = 1 << 30

// addSeg adds a stored received segment to s.
//
// TODO(group): use SeqSet.AddRange once it is committed in rmp/group; until
// then the numbers are added one by one (constant time each: every number
// extends the last range).
func addSeg(s *group.SeqSet, r group.Range) error {
	if r.To-r.From >= maxSegment {
		return fmt.Errorf("%w: received segment of %d numbers", ErrCorrupt, r.To-r.From+1)
	}
	for n := r.From; ; n++ {
		if _, err := s.Add(n); err != nil {
			return err
		}
		if n == r.To {
			return nil
		}
	}
}
