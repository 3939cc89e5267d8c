package store

import (
	"fmt"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// Limits bound what one Apply may carry. A zero field takes its default.
type Limits struct {
	// MaxGroupIDBytes bounds a key's GroupID (default 4096).
	MaxGroupIDBytes int
	// MaxValueBytes bounds one OpPut value (default 16 MiB).
	MaxValueBytes int
	// MaxBatchMutations bounds the mutations of one batch (default 65536).
	MaxBatchMutations int
	// MaxBatchBytes bounds the sum of a batch's value and groupId bytes
	// (default 64 MiB).
	MaxBatchBytes int
}

// Defaults of Limits.
const (
	DefaultMaxGroupIDBytes   = 4096
	DefaultMaxValueBytes     = 16 << 20
	DefaultMaxBatchMutations = 1 << 16
	DefaultMaxBatchBytes     = 64 << 20
)

// LimitsOf returns the limits st enforces: its Limits method's (memstore,
// pebblestore and etcdstore have one), else the defaults.
func LimitsOf(st Store) Limits {
	if l, ok := st.(interface{ Limits() Limits }); ok {
		return l.Limits()
	}
	return Limits{}
}

// BatchMutations is the most mutations one batch may carry.
func (l Limits) BatchMutations() int {
	return orDefault(l.MaxBatchMutations, DefaultMaxBatchMutations)
}

// BatchBytes is the most value and groupId bytes one batch may carry.
func (l Limits) BatchBytes() int { return orDefault(l.MaxBatchBytes, DefaultMaxBatchBytes) }

// MutationBytes is what m counts against BatchBytes.
func MutationBytes(m *group.Mutation) int { return len(m.Value) + len(m.Key.GroupID) }

func orDefault(v, d int) int {
	if v <= 0 {
		return d
	}
	return v
}

// GroupIDBytes is the longest groupId a key may carry.
func (l Limits) GroupIDBytes() int { return orDefault(l.MaxGroupIDBytes, DefaultMaxGroupIDBytes) }

// CheckKey reports whether k may be stored or looked up: non-zero role and
// kind, groupId within the limit.
func (l Limits) CheckKey(k group.Key) error {
	switch {
	case k.Role == 0:
		return fmt.Errorf("%w: zero role", ErrInvalid)
	case k.Kind == 0:
		return fmt.Errorf("%w: zero kind", ErrInvalid)
	case len(k.GroupID) > l.GroupIDBytes():
		return fmt.Errorf("%w: groupId of %d bytes exceeds %d", ErrInvalid, len(k.GroupID), l.GroupIDBytes())
	}
	return nil
}

// CheckBatch reports the first reason batch cannot be applied, as an error
// wrapping ErrInvalid that names the mutation's index; nil when every
// mutation is valid and the batch is within the limits.
func (l Limits) CheckBatch(batch []group.Mutation) error {
	if max := l.BatchMutations(); len(batch) > max {
		return fmt.Errorf("%w: batch of %d mutations exceeds %d", ErrInvalid, len(batch), max)
	}
	maxValue := orDefault(l.MaxValueBytes, DefaultMaxValueBytes)
	maxBytes := l.BatchBytes()
	total := 0
	for i, m := range batch {
		var err error
		switch m.Op {
		case group.OpPut:
			err = l.CheckKey(m.Key)
			if err == nil && len(m.Value) > maxValue {
				err = fmt.Errorf("%w: value of %d bytes exceeds %d", ErrInvalid, len(m.Value), maxValue)
			}
		case group.OpDelete:
			err = l.CheckKey(m.Key)
		case group.OpDeleteGeneration:
			err = l.checkGeneration(m.Key)
		case group.OpSetDeadline:
			err = l.checkGeneration(m.Key)
			if err == nil && !m.At.IsZero() {
				err = checkInstant(m.At)
			}
		default:
			err = fmt.Errorf("%w: unknown op %d", ErrInvalid, m.Op)
		}
		if err != nil {
			return fmt.Errorf("mutation %d: %w", i, err)
		}
		total += MutationBytes(&m)
		if total > maxBytes {
			return fmt.Errorf("mutation %d: %w: batch exceeds %d bytes", i, ErrInvalid, maxBytes)
		}
	}
	return nil
}

// checkGeneration checks a key that names a generation (Kind, Number unused).
func (l Limits) checkGeneration(k group.Key) error {
	k.Kind = group.KindMeta
	return l.CheckKey(k)
}

// checkInstant refuses a deadline outside the int64 nanosecond range
// (years 1678–2262), which the key layout cannot order.
func checkInstant(t time.Time) error {
	if t.Before(minInstant) || t.After(maxInstant) {
		return fmt.Errorf("%w: instant %s outside the nanosecond range", ErrInvalid, t.UTC().Format(time.RFC3339Nano))
	}
	return nil
}
