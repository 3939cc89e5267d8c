package sender

import (
	"hash/fnv"
	"time"
)

// retryInterval returns the wait before resend k (k >= 1), or, for
// k = MaxRetries+1, the wait after the last resend before the message is
// failed with RetriesExhausted (D26, D16). The base is Interval·Backoff^(k-1)
// capped at MaxInterval; jitter scales it by 1±Jitter with a value drawn from
// a splitmix64 hash of (seed, group, number, k). The draw is a pure function
// of its inputs, so the schedule is deterministic and the same after a
// restart without persisting generator state.
func retryInterval(p RetryPolicy, seed uint64, groupID string, number uint64, k int) time.Duration {
	d := float64(p.Interval)
	limit := float64(p.MaxInterval)
	for i := 1; i < k && d < limit; i++ {
		d *= p.Backoff
	}
	if d > limit {
		d = limit
	}
	if p.Jitter > 0 {
		u := unitDraw(seed, groupID, number, uint64(k)) // in [-1, 1)
		d *= 1 + p.Jitter*u
	}
	if d < 1 {
		d = 1
	}
	if d > float64(maxDuration) {
		return maxDuration
	}
	return time.Duration(d)
}

const maxDuration = time.Duration(1<<63 - 1)

// unitDraw returns a deterministic value in [-1, 1).
func unitDraw(seed uint64, groupID string, number, k uint64) float64 {
	h := fnv.New64a()
	h.Write([]byte(groupID))
	x := splitmix64(seed ^ h.Sum64())
	x = splitmix64(x ^ number)
	x = splitmix64(x ^ k)
	return float64(x>>11)/float64(1<<52) - 1
}

// splitmix64 is the finaliser of Steele, Lea and Flood's SplittableRandom.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// addClamped returns t+d without overflowing past the largest instant.
func addClamped(t time.Time, d time.Duration) time.Time {
	r := t.Add(d)
	if r.Before(t) {
		return t
	}
	return r
}
