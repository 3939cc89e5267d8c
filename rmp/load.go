package rmp

import (
	"iter"

	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/store"
)

// LoadEngine builds an Engine from what st holds (a fresh store gives a
// fresh Engine): the receiving RMP from the RoleReceiver records, the
// sending RMP from the RoleSender and RoleOutbox records.
func LoadEngine(cfg Config, st store.Store) (*Engine, error) {
	var scanErr error
	records := func(roles ...group.Role) iter.Seq2[group.Key, []byte] {
		return func(yield func(group.Key, []byte) bool) {
			for _, role := range roles {
				for rec, err := range st.Scan(store.RolePrefix(role)) {
					if err != nil {
						scanErr = err
						return
					}
					if !yield(rec.Key, rec.Value) {
						return
					}
				}
			}
		}
	}
	e, err := newEngine(cfg, records(group.RoleReceiver), records(group.RoleSender, group.RoleOutbox))
	if scanErr != nil {
		return nil, scanErr
	}
	return e, err
}
