//go:build unix

// Package benchkit holds what the benchmarks of several packages share: the
// ≈1.5 KB ordered exactly-once envelope of perf-limits.md §1 and the
// process CPU clock, so that every benchmark measures the same message.
package benchkit

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/soap"
)

// Body is the SOAP Body content of every benchmark message; with the wsrm
// headers the envelope is ≈1.5 KB, the size of perf-limits.md §1.
var Body = []byte(`<o:Order xmlns:o="urn:example:orders"><o:Lines>` +
	strings.Repeat(`<o:Line sku="A-000000" qty="1">widget</o:Line>`, 22) + `</o:Lines></o:Order>`)

// Envelope is reliable message number n of group gid as a WS-R 1.1 sender
// writes it: ordered exactly-once (AckRequested, DuplicateElimination,
// MessageOrder), Response pattern, expiring in an hour, SOAP 1.1.
func Envelope(tb testing.TB, gid string, n uint64) []byte {
	req := &soap.Request{
		MessageID:    soap.MessageID{GroupID: gid, Sequence: &soap.SequenceNum{Number: n}},
		ExpiryTime:   time.Now().Add(time.Hour).UTC().Truncate(time.Second),
		ReplyPattern: soap.ReplyPattern{Value: group.ReplyResponse},
		Flags:        group.Flags{AckRequested: true, DuplicateElimination: true, MessageOrder: true},
	}
	b, err := soap.AppendRequestEnvelope(nil, soap.SOAP11, req, Body)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// CPUTime is the user+system CPU time of the process so far (getrusage);
// 0 if it cannot be read.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
