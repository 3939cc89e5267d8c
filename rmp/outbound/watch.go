package outbound

import (
	"context"
	"reflect"
	"time"
)

// watch is an exchange's context, kept for the next exchange under the
// same parent: a cancelable child of parent and a timer that cancels it
// once Timeout has passed. context.WithTimeout per POST costs a timerCtx,
// a runtime timer and, once net/http derives its own context from it, a
// Done channel and a children map (7 allocations and the timer heap's
// lock, #22); a watch that did not fire is re-armed with Timer.Reset.
type watch struct {
	parent context.Context
	ctx    context.Context
	cancel context.CancelCauseFunc
	timer  *time.Timer // nil until the first exchange arms it
}

// maxIdleWatches bounds the watches kept between exchanges (about one per
// exchange in flight, MaxPerDestination a destination).
const maxIdleWatches = 256

// arm returns a watch of parent, armed to cancel its context after d.
func (t *HTTPTransport) arm(parent context.Context, d time.Duration) *watch {
	// Comparing a context of a non-comparable type would panic: such a
	// parent gets a watch that is never kept.
	if reflect.TypeOf(parent).Comparable() {
		t.mu.Lock()
		for i := len(t.watches) - 1; i >= 0; i-- {
			if w := t.watches[i]; w.parent == parent {
				t.watches = append(t.watches[:i], t.watches[i+1:]...)
				t.mu.Unlock()
				w.timer.Reset(d)
				return w
			}
		}
		t.mu.Unlock()
	}
	w := &watch{parent: parent}
	w.ctx, w.cancel = context.WithCancelCause(parent)
	w.timer = time.AfterFunc(d, func() { w.cancel(context.DeadlineExceeded) })
	return w
}

// disarm ends w's exchange: w is kept for the next one when its timer had
// not fired and its parent was not canceled (its context is then still
// live), else canceled for good.
func (t *HTTPTransport) disarm(w *watch) {
	if !w.timer.Stop() || w.ctx.Err() != nil || !reflect.TypeOf(w.parent).Comparable() {
		w.cancel(context.Canceled)
		return
	}
	t.mu.Lock()
	if len(t.watches) < maxIdleWatches {
		t.watches = append(t.watches, w)
		w = nil
	}
	t.mu.Unlock()
	if w != nil {
		w.cancel(context.Canceled)
	}
}
