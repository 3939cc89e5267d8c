package gateway

import (
	"errors"
	"fmt"
	"github.com/wsrkit/wsrkit/rmp"
	"sync"
	"time"

	"github.com/wsrkit/wsrkit/store"
)

// A store failure (a full disk: ENOSPC, or any write error) stops the
// node: requests answer 503 at once, /healthz 503 (#18). The gateway does
// not reopen the store in place; it probes the disk every second and, once
// the disk takes writes again, reports on StoreFailed, and `wsrkit serve`
// exits 1 with one line so that a supervisor restarts it. The restart
// recovers from what was committed: nothing acknowledged is lost.

// ErrStoreFailed is wrapped by the error StoreFailed reports.
var ErrStoreFailed = errors.New("gateway: store failed")

// storeProbeInterval paces the disk probes of a failed store (wall time:
// it paces the disk, not the protocol).
const storeProbeInterval = time.Second

// watchStore starts watching the store of the pebble node n; the function
// it returns stops the watch.
func (g *Gateway) watchStore(st store.Store, n *rmp.Node) (stop func()) {
	g.storeDown = make(chan error, 1)
	stopWatch := make(chan struct{})
	var once sync.Once
	probe, _ := st.(interface{ ProbeSpace() error })
	go every(storeProbeInterval, stopWatch, func() bool {
		err := n.Err()
		if err == nil {
			return true
		}
		if probe != nil && probe.ProbeSpace() != nil {
			return true // still full: keep answering 503
		}
		g.storeDown <- fmt.Errorf("%w (%v); the disk takes writes again: exiting so that a supervisor restarts the gateway", ErrStoreFailed, err)
		return false
	})
	return func() { once.Do(func() { close(stopWatch) }) }
}

// StoreFailed reports, once, that the -store pebble node was stopped by
// its store and the disk takes writes again: the process should exit and
// be restarted. It never fires with -store etcd.
func (g *Gateway) StoreFailed() <-chan error { return g.storeDown }
