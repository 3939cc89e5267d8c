package callgate

import (
	"errors"
	"testing"

	"github.com/wsrkit/wsrkit/store"
)

// Close shuts the gate to new calls at once, Wait returns only after the
// calls in progress exit, and a failure refuses calls until Close.
func TestGate(t *testing.T) {
	var g Gate
	boom := errors.New("boom")
	if err := g.Enter(boom); err != boom {
		t.Fatalf("Enter(failed) = %v", err)
	}
	if err := g.Enter(nil); err != nil {
		t.Fatalf("Enter = %v", err)
	}
	if g.Closing() {
		t.Fatal("closing before Close")
	}
	if !g.Close() || g.Close() {
		t.Fatal("Close: want true once, then false")
	}
	if !g.Closing() {
		t.Fatal("not closing after Close")
	}
	if err := g.Enter(boom); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("Enter after Close = %v, want ErrClosed", err)
	}
	waited := make(chan struct{})
	go func() { g.Wait(); close(waited) }()
	select {
	case <-waited:
		t.Fatal("Wait returned with a call in progress")
	default:
	}
	g.Exit()
	<-waited
	g.Wait() // nothing in progress: returns at once
}
