// Package kvplan is the key layout the stores share and turns a batch of
// group.Mutation values into the operations of an ordered byte-key engine
// under it. Every store implementation uses it, so they share one meaning
// of a batch.
//
// # Key layout
//
// Implementations over an ordered byte-key engine (store/pebblestore,
// store/memstore, store/etcdstore) share this layout; EncodeKey and
// DecodeKey implement it.
// Numbers are fixed-width big-endian; the variable-length groupId is escaped
// so that byte order equals (role, groupId, generation, kind, number) order
// and no encoded id is a prefix of another:
//
//	gid(s)      = s with each 0x00 written as 0x00 0xFF, then 0x00 0x01
//	record      = 0x72 'r' | role:1 | gid(GroupID) | generation:8 | kind:1 | number:8   → value
//	deadline    = 0x64 'd' | at:8   | role:1 | gid(GroupID) | generation:8            → empty
//	deadlineRev = 0x65 'e' | role:1 | gid(GroupID) | generation:8                     → at:8
//
// at is the deadline instant in UTC nanoseconds since the Unix epoch, as a
// big-endian uint64 with the sign bit flipped, so byte order is time order.
// Instants outside the int64 nanosecond range (years 1678–2262) are refused.
//
// The records of one generation, (role, gid, generation), form one contiguous
// key range, removed by OpDeleteGeneration with ONE range deletion plus point
// deletions of its two deadline keys. The reverse entry deadlineRev says which
// deadline key a generation has, so replacing or clearing it deletes the old
// index key in the same atomic batch: the index never holds stale entries.
package kvplan

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/store"
)

// Reader returns the current engine value of key; ok is false when absent.
type Reader func(key []byte) (value []byte, ok bool, err error)

// Writer receives a batch's engine operations in order. Its arguments are
// valid only during the call (Translate reuses one key buffer for all of a
// batch's keys): implementations copy what they keep.
type Writer interface {
	Set(key, value []byte) error
	Delete(key []byte) error
	DeleteRange(lo, hi []byte) error
}

// Translate checks batch against lim, then writes its operations to w,
// reading the generations' current deadlines through read. It writes nothing
// when the batch is invalid; after any other error the caller discards w.
//
// The caller must keep the deadlines of the generations named by
// LockKeys(batch) from changing between the reads and the commit of w.
func Translate(batch []group.Mutation, lim store.Limits, read Reader, w Writer) error {
	_, err := translate(batch, lim, read, w)
	return err
}

// Final is the deadline a generation's reverse entry holds once a batch is
// committed: At is its EncodeInstant value; Has is false when it has none.
type Final struct {
	Rev string // DeadlineRevKey of the generation
	At  uint64
	Has bool
}

// TranslateFinal is Translate, and also returns the final deadline of every
// generation named by LockKeys(batch), in the order the batch first names
// them: what a store may cache once w is committed.
func TranslateFinal(batch []group.Mutation, lim store.Limits, read Reader, w Writer) ([]Final, error) {
	t, err := translate(batch, lim, read, w)
	if err != nil {
		return nil, err
	}
	out := make([]Final, len(t.order))
	for i, rev := range t.order {
		d := t.overlay[rev]
		out[i] = Final{Rev: rev, At: d.u, Has: d.has}
	}
	return out, nil
}

func translate(batch []group.Mutation, lim store.Limits, read Reader, w Writer) (*translator, error) {
	if err := lim.CheckBatch(batch); err != nil {
		return nil, err
	}
	t := &translator{read: read, w: w}
	for _, m := range batch {
		k := m.Key
		id := group.ID{GroupID: k.GroupID, Generation: k.Generation}
		var err error
		switch m.Op {
		case group.OpPut:
			t.key = appendKey(t.key[:0], k)
			err = w.Set(t.key, m.Value)
		case group.OpDelete:
			t.key = appendKey(t.key[:0], k)
			err = w.Delete(t.key)
		case group.OpDeleteGeneration:
			// One range deletion for the whole generation (peers.md D.2:
			// many small range deletions hurt iteration).
			lo := AppendGenerationPrefix(nil, k.Role, id)
			if err = w.DeleteRange(lo, PrefixEnd(lo)); err == nil {
				err = t.setDeadline(k.Role, id, deadline{})
			}
		case group.OpSetDeadline:
			var d deadline
			if !m.At.IsZero() {
				d.u, _ = EncodeInstant(m.At) // checked by CheckBatch
				d.has = true
			}
			err = t.setDeadline(k.Role, id, d)
		}
		if err != nil {
			return nil, err
		}
	}
	return t, nil
}

// deadline is a generation's deadline as an EncodeInstant value; has is
// false when it has none.
type deadline struct {
	u   uint64
	has bool
}

type translator struct {
	read Reader
	w    Writer
	// overlay: deadlines as read or left by earlier mutations of this
	// batch, keyed by reverse-entry key; order: its keys, first read first.
	overlay map[string]deadline
	order   []string
	// key, rev and at are scratch buffers for the keys and the value
	// handed to w, which copies what it keeps (Writer).
	key, rev []byte
	at       [8]byte
}

// current returns the deadline of rev, reading it once per batch.
func (t *translator) current(rev []byte) (deadline, error) {
	if d, ok := t.overlay[string(rev)]; ok {
		return d, nil
	}
	v, ok, err := t.read(rev)
	if err != nil {
		return deadline{}, err
	}
	var d deadline
	if ok {
		if len(v) != 8 {
			return deadline{}, fmt.Errorf("%w: deadline entry %x holds %d bytes", store.ErrCorrupt, rev, len(v))
		}
		d = deadline{u: binary.BigEndian.Uint64(v), has: true}
	}
	if t.overlay == nil {
		t.overlay = make(map[string]deadline)
	}
	k := string(rev)
	t.overlay[k] = d
	t.order = append(t.order, k)
	return d, nil
}

// setDeadline replaces the deadline of generation id with d, deleting the
// old index key so the index never holds a stale entry.
func (t *translator) setDeadline(role group.Role, id group.ID, d deadline) error {
	t.rev = appendDeadlineRevKey(t.rev[:0], role, id)
	rev := t.rev
	old, err := t.current(rev)
	if err != nil {
		return err
	}
	if old == d {
		return nil
	}
	t.overlay[string(rev)] = d // present: current recorded it
	if old.has {
		t.key = appendDeadlineKey(t.key[:0], old.u, role, id)
		if err := t.w.Delete(t.key); err != nil {
			return err
		}
	}
	if !d.has {
		return t.w.Delete(rev)
	}
	t.key = appendDeadlineKey(t.key[:0], d.u, role, id)
	if err := t.w.Set(t.key, nil); err != nil {
		return err
	}
	binary.BigEndian.PutUint64(t.at[:], d.u)
	return t.w.Set(rev, t.at[:])
}

// LockKeys returns, sorted and without repeats, the reverse-entry keys of the
// generations whose deadline batch reads (OpSetDeadline,
// OpDeleteGeneration). A concurrent store locks them, in this order, from
// Translate until its commit returns.
func LockKeys(batch []group.Mutation) []string {
	var keys []string
	for _, m := range batch {
		if m.Op == group.OpSetDeadline || m.Op == group.OpDeleteGeneration {
			keys = append(keys, string(DeadlineRevKey(m.Key.Role, group.ID{GroupID: m.Key.GroupID, Generation: m.Key.Generation})))
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}
