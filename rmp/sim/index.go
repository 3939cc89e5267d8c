package sim

import (
	"time"

	"github.com/wsrkit/wsrkit/rmp/admin"
	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/store"
)

// indexCheckEvery is how often (in drains) a node's deadline index is
// checked against its engine; every recovery is checked too.
const indexCheckEvery = 32

// checkIndex checks that the store's deadline index holds every group
// generation with a timer at an instant no later than the timer (a reader
// of DueBefore may find a generation early, never late; SPEC-NOTES
// "deadline index"), across crashes and recoveries; instants clamped at
// the store's range aside.
func (n *node) checkIndex() {
	type gen struct {
		role group.Role
		id   group.ID
	}
	indexed := map[gen]time.Time{}
	for d, err := range n.st.DueBefore(store.MaxInstant()) {
		if err != nil {
			n.wd.violate(-1, "%s: deadline index: %v", n.name, err)
			return
		}
		indexed[gen{d.Role, d.ID}] = d.At
	}
	views := append(admin.Groups(n.e.Admin(), admin.Sending), admin.Groups(n.e.Admin(), admin.Receiving)...)
	for _, v := range views {
		due := v.NextDeadline
		if due.IsZero() || !due.After(group.MinIndexedDeadline()) {
			continue
		}
		at, ok := indexed[gen{v.Role, group.ID{GroupID: v.GroupID, Generation: v.Generation}}]
		if !ok || at.After(due) {
			n.wd.violate(-1, "%s: deadline index: %v group %s generation %d indexed at %v (present %v), due at %v",
				n.name, v.Role, v.GroupID, v.Generation, at, ok, due)
		}
	}
}
