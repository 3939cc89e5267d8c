package etcdstore

import (
	"net"
	"testing"
	"time"
)

// TestNewOwnerUnreachableFailsWithinTimeout: granting the lease is bounded
// by the store's request timeout, so a node pointed at a dead cluster gets
// an error instead of hanging.
func TestNewOwnerUnreachableFailsWithinTimeout(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	st, err := Open(Options{Endpoints: []string{addr}, Prefix: "/unreachable/", RequestTimeout: 300 * time.Millisecond, DialTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Logf("Open refused the dead endpoint itself: %v", err) // failing fast is what is asserted
		return
	}
	defer st.Close()
	done := make(chan error, 1)
	go func() {
		_, err := NewOwner(st, "n1", 5*time.Second)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("NewOwner on an unreachable cluster succeeded")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("NewOwner still blocked 10s after a 300ms request timeout")
	}
}
