package group

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func numbers[T any](hs []Held[T]) []uint64 {
	var out []uint64
	for _, h := range hs {
		out = append(out, h.Number)
	}
	return out
}

func held(n uint64, expiry time.Time, bytes int) Held[string] {
	return Held[string]{Number: n, Expiry: expiry, Bytes: bytes, Item: "m"}
}

// An ordered group holds 2 and 3 while 1 is missing, then delivers 1..3 in
// order once 1 arrives (D14, R48).
func TestOrderBufferHoldsThenReleases(t *testing.T) {
	b := NewOrderBuffer[string](0)
	if n, ok := b.Next(); n != 0 || !ok {
		t.Fatalf("Next = %d,%v", n, ok)
	}
	b.Advance() // 0 delivered directly
	if b.Push(held(1, at(hour), 10)) {
		t.Fatal("the next number must be delivered, not held")
	}
	if b.Push(held(0, at(hour), 10)) {
		t.Fatal("a delivered number was held")
	}
	if !b.Push(held(3, at(2*minute), 30)) || !b.Push(held(2, at(5*minute), 20)) {
		t.Fatal("out-of-order numbers refused")
	}
	if b.Push(held(3, at(hour), 99)) {
		t.Fatal("a duplicate was held twice")
	}
	if b.Push(held(9, at(hour), -1)) {
		t.Fatal("negative size accepted")
	}
	if b.Len() != 2 || b.Bytes() != 50 || !b.IsHeld(2) || !b.IsHeld(3) || b.IsHeld(1) || b.IsHeld(4) {
		t.Fatalf("Len %d Bytes %d", b.Len(), b.Bytes())
	}
	if e, ok := b.EarliestExpiry(); !ok || !e.Equal(at(2*minute)) {
		t.Fatalf("EarliestExpiry = %v", e)
	}
	if got := b.PopReady(nil); len(got) != 0 {
		t.Fatalf("popped %v with 1 missing", numbers(got))
	}
	b.Advance() // 1 arrives and is delivered directly
	got := b.PopReady(nil)
	if !slices.Equal(numbers(got), []uint64{2, 3}) || got[0].Bytes != 20 || got[0].Item != "m" {
		t.Fatalf("PopReady = %+v", got)
	}
	if n, _ := b.Next(); n != 4 || b.Len() != 0 || b.Bytes() != 0 {
		t.Fatalf("after pop: next %d len %d bytes %d", n, b.Len(), b.Bytes())
	}
	if _, ok := b.EarliestExpiry(); ok {
		t.Fatal("EarliestExpiry of an empty buffer")
	}
}

// PopReady stops at the first gap and keeps what follows it.
func TestOrderBufferPopStopsAtGap(t *testing.T) {
	b := NewOrderBuffer[string](10)
	for _, n := range []uint64{11, 12, 14, 15} {
		b.Push(held(n, at(hour), 1))
	}
	b.Advance()
	if got := numbers(b.PopReady(nil)); !slices.Equal(got, []uint64{11, 12}) {
		t.Fatalf("popped %v", got)
	}
	if n, _ := b.Next(); n != 13 || b.Len() != 2 || b.Bytes() != 2 {
		t.Fatalf("next %d len %d", n, b.Len())
	}
	s := b.Numbers()
	wantRanges(t, s, Range{14, 15})
}

// D14/D12: expired held messages leave the buffer; EarliestExpiry follows.
func TestOrderBufferRemoveExpired(t *testing.T) {
	b := NewOrderBuffer[string](0)
	b.Push(held(5, at(2*minute), 5))
	b.Push(held(3, at(minute), 3))
	b.Push(held(4, at(3*minute), 4))
	if got := b.RemoveExpired(at(minute), nil); len(got) != 0 {
		t.Fatal("removed at its ExpiryTime itself (passes strictly after, D9)")
	}
	got := b.RemoveExpired(at(minute+ns), nil)
	if !slices.Equal(numbers(got), []uint64{3}) || b.Bytes() != 9 {
		t.Fatalf("removed %v bytes %d", numbers(got), b.Bytes())
	}
	if e, _ := b.EarliestExpiry(); !e.Equal(at(2 * minute)) {
		t.Fatalf("EarliestExpiry after removal = %v", e)
	}
	got = b.Drain(nil)
	if !slices.Equal(numbers(got), []uint64{4, 5}) || b.Len() != 0 || b.Bytes() != 0 {
		t.Fatalf("Drain = %v", numbers(got))
	}
	if _, ok := b.EarliestExpiry(); ok {
		t.Fatal("EarliestExpiry after Drain")
	}
	if !b.Push(held(7, at(hour), 1)) {
		t.Fatal("push after drain")
	}
	if e, _ := b.EarliestExpiry(); !e.Equal(at(hour)) {
		t.Fatal("EarliestExpiry after drain and push")
	}
}

// D2: once MaxUint64 is delivered nothing comes next.
func TestOrderBufferAtMaximum(t *testing.T) {
	b := NewOrderBuffer[string](maxU - 1)
	if !b.Push(held(maxU, at(hour), 1)) {
		t.Fatal("push max")
	}
	b.Advance()
	if got := numbers(b.PopReady(nil)); !slices.Equal(got, []uint64{maxU}) {
		t.Fatalf("popped %v", got)
	}
	if n, ok := b.Next(); ok || n != maxU {
		t.Fatalf("Next = %d,%v after the maximum", n, ok)
	}
	if b.Push(held(maxU, at(hour), 1)) {
		t.Fatal("push after exhaustion")
	}
	b.Advance()
	if n, ok := b.Next(); ok || n != maxU {
		t.Fatal("Advance past the maximum moved")
	}
}

// A randomized check against a plain model: the cached earliest expiry, the
// byte count and the delivered order always match.
func TestOrderBufferModel(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	b := NewOrderBuffer[int](0)
	modelHeld := map[uint64]Held[int]{}
	var next uint64
	var delivered []uint64
	now := t0
	for i := range 20_000 {
		switch op := r.IntN(10); {
		case op < 6:
			n := next + r.Uint64N(30)
			h := Held[int]{Number: n, Expiry: now.Add(time.Duration(r.IntN(600)) * time.Second), Bytes: r.IntN(100), Item: i}
			_, dup := modelHeld[n]
			want := n > next && !dup
			if got := b.Push(h); got != want {
				t.Fatalf("op %d: Push(%d) = %v want %v", i, n, got, want)
			}
			if want {
				modelHeld[n] = h
			}
			if n == next {
				b.Advance()
				delivered = append(delivered, n)
				next++
				for _, h := range b.PopReady(nil) {
					delivered = append(delivered, h.Number)
					delete(modelHeld, h.Number)
				}
				next = delivered[len(delivered)-1] + 1
			}
		case op < 8:
			now = now.Add(time.Duration(r.IntN(60)) * time.Second)
			for _, h := range b.RemoveExpired(now, nil) {
				if !Passed(h.Expiry, now) {
					t.Fatal("removed an unexpired message")
				}
				delete(modelHeld, h.Number)
			}
		default:
			if n, _ := b.Next(); n != next {
				t.Fatalf("Next = %d want %d", n, next)
			}
		}
		var bytes int
		var minE time.Time
		for _, h := range modelHeld {
			bytes += h.Bytes
			if minE.IsZero() || h.Expiry.Before(minE) {
				minE = h.Expiry
			}
		}
		e, ok := b.EarliestExpiry()
		if b.Len() != len(modelHeld) || b.Bytes() != bytes || ok != (len(modelHeld) > 0) || (ok && !e.Equal(minE)) {
			t.Fatalf("op %d: len %d/%d bytes %d/%d min %v/%v", i, b.Len(), len(modelHeld), b.Bytes(), bytes, e, minE)
		}
	}
	for i := 1; i < len(delivered); i++ {
		if delivered[i] != delivered[i-1]+1 {
			t.Fatalf("delivered out of order at %d: %v", i, delivered[i-1:i+1])
		}
	}
}
