package gateway

import "time"

// every calls f every d until stop is closed or f returns false: the
// gateway's periodic work (shard balance, certificate and store checks,
// stats samples).
func every(d time.Duration, stop <-chan struct{}, f func() (more bool)) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		if !f() {
			return
		}
	}
}
