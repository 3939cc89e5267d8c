package etcdstore

import (
	"slices"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// plan is a kvplan.Writer that folds a batch's operations into their net
// effect. etcd refuses a transaction that puts a key twice or puts a key
// that one of its deletions covers ("duplicate key given in txn request"),
// whereas a batch may write a key, delete it and write it again. Operations
// on different keys commute, so the net effect, one operation per key and
// range deletions cut around the keys put after them, is the batch.
type plan struct {
	// points: the last operation on each key since the last range deletion
	// that covered it (put, or delete when del).
	points map[string]point
	// ranges: the range deletions [lo, hi), in batch order.
	ranges [][2]string
}

type point struct {
	value []byte
	del   bool
}

// Set implements kvplan.Writer.
func (p *plan) Set(k, v []byte) error {
	p.point(string(k), point{value: append([]byte{}, v...)})
	return nil
}

// Delete implements kvplan.Writer.
func (p *plan) Delete(k []byte) error {
	p.point(string(k), point{del: true})
	return nil
}

// DeleteRange implements kvplan.Writer. It drops the earlier operations on
// keys in the range, which it supersedes.
func (p *plan) DeleteRange(lo, hi []byte) error {
	l, h := string(lo), string(hi)
	for k := range p.points {
		if l <= k && k < h {
			delete(p.points, k)
		}
	}
	p.ranges = append(p.ranges, [2]string{l, h})
	return nil
}

func (p *plan) point(k string, pt point) {
	if p.points == nil {
		p.points = make(map[string]point)
	}
	p.points[k] = pt
}

// ops returns the net operations in a deterministic order: range deletions
// (cut around the keys put after them), then point operations in key order.
// A point deletion inside a range deletion is left out.
func (p *plan) ops() []clientv3.Op {
	keys := make([]string, 0, len(p.points))
	var puts []string
	for k, pt := range p.points {
		keys = append(keys, k)
		if !pt.del {
			puts = append(puts, k)
		}
	}
	slices.Sort(keys)
	slices.Sort(puts)
	var ops []clientv3.Op
	for _, r := range p.ranges {
		lo := r[0]
		i, _ := slices.BinarySearch(puts, lo)
		for ; i < len(puts) && puts[i] < r[1]; i++ {
			if lo < puts[i] {
				ops = append(ops, clientv3.OpDelete(lo, clientv3.WithRange(puts[i])))
			}
			lo = puts[i] + "\x00" // the smallest key after puts[i]
		}
		if lo < r[1] {
			ops = append(ops, clientv3.OpDelete(lo, clientv3.WithRange(r[1])))
		}
	}
	for _, k := range keys {
		pt := p.points[k]
		switch {
		case !pt.del:
			ops = append(ops, clientv3.OpPut(k, string(pt.value)))
		case !p.covered(k):
			ops = append(ops, clientv3.OpDelete(k))
		}
	}
	return ops
}

// covered reports whether a range deletion of p covers k.
func (p *plan) covered(k string) bool {
	for _, r := range p.ranges {
		if r[0] <= k && k < r[1] {
			return true
		}
	}
	return false
}
