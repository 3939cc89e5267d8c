package kvplan

import (
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"math"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/store"
)

// Key-space tags: the first byte of every stored key (layout in the package doc).
const (
	tagRecord      = 'r'
	tagDeadline    = 'd'
	tagDeadlineRev = 'e'
)

// gid escaping: 0x00 is written as 0x00 0xFF and the id ends with 0x00 0x01,
// so encoded ids keep byte order and none is a prefix of another.
const (
	gidEscape = 0x00
	gidEscFF  = 0xFF
	gidEnd    = 0x01
)

// appendKey appends the encoding of record key k to dst.
func appendKey(dst []byte, k group.Key) []byte {
	dst = append(dst, tagRecord, byte(k.Role))
	dst = appendGID(dst, k.GroupID)
	dst = binary.BigEndian.AppendUint64(dst, k.Generation)
	dst = append(dst, byte(k.Kind))
	return binary.BigEndian.AppendUint64(dst, k.Number)
}

// recordKeyFixed is the length of a record key but its groupId's bytes
// (and their escapes): tag, role, terminator, generation, kind, number.
const recordKeyFixed = 1 + 1 + 2 + 8 + 1 + 8

// EncodeKey returns the encoding of record key k, in one allocation for a
// groupId without 0x00 bytes.
func EncodeKey(k group.Key) []byte {
	return appendKey(make([]byte, 0, recordKeyFixed+len(k.GroupID)), k)
}

// DecodeKey decodes a record key written by EncodeKey. Any other input gives
// an error wrapping store.ErrCorrupt.
func DecodeKey(b []byte) (group.Key, error) {
	var k group.Key
	if len(b) < 2 || b[0] != tagRecord {
		return k, corruptKey(b, "not a record key")
	}
	k.Role = group.Role(b[1])
	gid, rest, err := decodeGID(b[2:], 17)
	if err != nil {
		return k, corruptKey(b, err.Error())
	}
	k.GroupID = gid
	k.Generation = binary.BigEndian.Uint64(rest)
	k.Kind = group.Kind(rest[8])
	k.Number = binary.BigEndian.Uint64(rest[9:])
	return k, nil
}

// appendGID appends the escaped, terminated encoding of s.
func appendGID(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] == gidEscape {
			dst = append(dst, gidEscape, gidEscFF)
			continue
		}
		dst = append(dst, s[i])
	}
	return append(dst, gidEscape, gidEnd)
}

// decodeGID reads an escaped groupId from the front of b and returns it with
// the bytes after its terminator, which must be tail bytes (the rest of a
// fixed-length key).
func decodeGID(b []byte, tail int) (string, []byte, error) {
	buf := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] != gidEscape {
			buf = append(buf, b[i])
			continue
		}
		if i+1 >= len(b) {
			return "", nil, fmt.Errorf("groupId escape at end")
		}
		switch b[i+1] {
		case gidEscFF:
			buf = append(buf, gidEscape)
			i++
		case gidEnd:
			if rest := b[i+2:]; len(rest) == tail {
				return string(buf), rest, nil
			}
			return "", nil, errors.New("wrong length after groupId")
		default:
			return "", nil, fmt.Errorf("bad groupId escape 0x%02x", b[i+1])
		}
	}
	return "", nil, fmt.Errorf("groupId not terminated")
}

func corruptKey(b []byte, why string) error {
	const show = 64
	if len(b) > show {
		return fmt.Errorf("%w: key %x…: %s", store.ErrCorrupt, b[:show], why)
	}
	return fmt.Errorf("%w: key %x: %s", store.ErrCorrupt, b, why)
}

// EncodeInstant returns t as an order-preserving uint64: UTC nanoseconds
// since the Unix epoch with the sign bit flipped. Instants outside the int64
// nanosecond range give an error wrapping store.ErrInvalid.
func EncodeInstant(t time.Time) (uint64, error) {
	if t.Before(minInstant) || t.After(maxInstant) {
		return 0, fmt.Errorf("%w: instant %s outside the nanosecond range", store.ErrInvalid, t.UTC().Format(time.RFC3339Nano))
	}
	return uint64(t.UnixNano()) ^ (1 << 63), nil
}

// DecodeInstant is the inverse of EncodeInstant; the result is in UTC.
func DecodeInstant(u uint64) time.Time {
	return time.Unix(0, int64(u^(1<<63))).UTC()
}

var (
	minInstant = time.Unix(0, math.MinInt64)
	maxInstant = time.Unix(0, math.MaxInt64)
)

// AppendGenerationPrefix appends the key prefix shared by every record of
// generation id of role.
func AppendGenerationPrefix(dst []byte, role group.Role, id group.ID) []byte {
	dst = append(dst, tagRecord, byte(role))
	dst = appendGID(dst, id.GroupID)
	return binary.BigEndian.AppendUint64(dst, id.Generation)
}

// DeadlineKey returns the deadline-index key of generation id of role at
// instant u (an EncodeInstant value).
func DeadlineKey(u uint64, role group.Role, id group.ID) []byte {
	return appendDeadlineKey(make([]byte, 0, 20+len(id.GroupID)), u, role, id)
}

func appendDeadlineKey(dst []byte, u uint64, role group.Role, id group.ID) []byte {
	dst = append(dst, tagDeadline)
	dst = binary.BigEndian.AppendUint64(dst, u)
	dst = append(dst, byte(role))
	dst = appendGID(dst, id.GroupID)
	return binary.BigEndian.AppendUint64(dst, id.Generation)
}

// DecodeDeadlineKey decodes a key written by DeadlineKey.
func DecodeDeadlineKey(b []byte) (store.Deadline, error) {
	var d store.Deadline
	if len(b) < 10 || b[0] != tagDeadline {
		return d, corruptKey(b, "not a deadline key")
	}
	d.At = DecodeInstant(binary.BigEndian.Uint64(b[1:]))
	d.Role = group.Role(b[9])
	gid, rest, err := decodeGID(b[10:], 8)
	if err != nil {
		return d, corruptKey(b, err.Error())
	}
	d.ID = group.ID{GroupID: gid, Generation: binary.BigEndian.Uint64(rest)}
	return d, nil
}

// DeadlineRevKey returns the key of the reverse deadline entry of generation
// id of role; its value is the generation's deadline as 8 big-endian bytes of
// EncodeInstant.
func DeadlineRevKey(role group.Role, id group.ID) []byte {
	return appendDeadlineRevKey(make([]byte, 0, 12+len(id.GroupID)), role, id)
}

func appendDeadlineRevKey(dst []byte, role group.Role, id group.ID) []byte {
	dst = append(dst, tagDeadlineRev, byte(role))
	dst = appendGID(dst, id.GroupID)
	return binary.BigEndian.AppendUint64(dst, id.Generation)
}

// NextDeadline is a store's NextDeadline over its DueBefore: the first
// deadline due by store.MaxInstant.
func NextDeadline(dueBefore func(upTo time.Time) iter.Seq2[store.Deadline, error]) (time.Time, bool, error) {
	for d, err := range dueBefore(store.MaxInstant()) {
		return d.At, err == nil, err
	}
	return time.Time{}, false, nil
}

// DeadlineBounds returns the key range [lo, hi) of the deadline entries with
// At <= upTo; ok is false when there can be none (upTo before the range).
func DeadlineBounds(upTo time.Time) (lo, hi []byte, ok bool) {
	lo = []byte{tagDeadline}
	if upTo.After(maxInstant) {
		return lo, []byte{tagDeadline + 1}, true
	}
	u, err := EncodeInstant(upTo)
	if err != nil {
		return nil, nil, false
	}
	// All keys with instant <= u sort before (tagDeadline, u+1).
	if u == math.MaxUint64 {
		return lo, []byte{tagDeadline + 1}, true
	}
	return lo, binary.BigEndian.AppendUint64([]byte{tagDeadline}, u+1), true
}

// PrefixEnd returns the smallest key greater than every key with prefix p,
// or nil when there is none (p is empty or all 0xFF).
func PrefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] != 0xFF {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// ScanPrefix is an iteration over the records p selects, for a store's
// Scan and Generations: as it starts, scan runs over PrefixBounds(p, lim),
// or the bounds' error is all it yields.
func ScanPrefix[T any](p store.Prefix, lim store.Limits, scan func(lo, hi []byte, yield func(T, error) bool)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		lo, hi, err := PrefixBounds(p, lim)
		if err != nil {
			var zero T
			yield(zero, err)
			return
		}
		scan(lo, hi, yield)
	}
}

// PrefixBounds returns the key range [lo, hi) holding exactly the records p
// selects, checked against lim. An unknown level or a zero role or kind gives
// an error wrapping store.ErrInvalid.
func PrefixBounds(p store.Prefix, lim store.Limits) (lo, hi []byte, err error) {
	if p.Role == 0 {
		return nil, nil, fmt.Errorf("%w: prefix with zero role", store.ErrInvalid)
	}
	if p.Level >= store.LevelGroup && len(p.GroupID) > lim.GroupIDBytes() {
		return nil, nil, fmt.Errorf("%w: groupId of %d bytes exceeds %d", store.ErrInvalid, len(p.GroupID), lim.GroupIDBytes())
	}
	lo = []byte{tagRecord, byte(p.Role)}
	switch p.Level {
	case store.LevelRole:
	case store.LevelGroup:
		lo = appendGID(lo, p.GroupID)
	case store.LevelGeneration:
		lo = AppendGenerationPrefix(lo[:0], p.Role, group.ID{GroupID: p.GroupID, Generation: p.Generation})
	case store.LevelKind:
		if p.Kind == 0 {
			return nil, nil, fmt.Errorf("%w: prefix with zero kind", store.ErrInvalid)
		}
		lo = AppendGenerationPrefix(lo[:0], p.Role, group.ID{GroupID: p.GroupID, Generation: p.Generation})
		lo = append(lo, byte(p.Kind))
	default:
		return nil, nil, fmt.Errorf("%w: prefix level %d", store.ErrInvalid, p.Level)
	}
	// lo starts with tagRecord < 0xFF, so PrefixEnd is never nil.
	return lo, PrefixEnd(lo), nil
}
