package rmp

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/rmp/receiver"
)

// The answers waiting for one delivery (copies of a held message) are a
// list: each is released once, in the order they came, also after one in
// the middle left it (its AwaitDelivery passed), and a delivery's list
// leaves the node with its end.
func TestAwaitingAnswersAreReleasedInOrderOnce(t *testing.T) {
	n := &Node{awaiting: map[receiver.DeliveryRef]*awaitingAnswer{}, handing: map[receiver.DeliveryRef]int{}}
	ref := receiver.DeliveryRef{Group: group.ID{GroupID: "g"}, HasNumber: true, Number: 3}
	other := receiver.DeliveryRef{Group: group.ID{GroupID: "h"}}
	ch := make(chan Answer, 8) // one channel for all: the order they are answered in
	for i := range 4 {
		n.mu.Lock()
		n.await(ref, ch, Answer{Token: uint64(i), Status: 200})
		n.mu.Unlock()
	}
	n.mu.Lock()
	n.await(other, make(chan Answer, 1), Answer{Token: 9})
	gone := n.awaiting[ref].next // the second, as if its AwaitDelivery passed
	require.True(t, n.unlinkAwaiting(ref, gone))
	require.False(t, n.unlinkAwaiting(ref, gone), "taken out once")
	n.mu.Unlock()

	n.completeAnswer(ref, nil, nil)
	var got []uint64
	for len(ch) > 0 {
		got = append(got, (<-ch).Token)
	}
	require.Equal(t, []uint64{0, 2, 3}, got, "each once, in the order they came, less the one that left")
	require.NotContains(t, n.awaiting, ref)
	require.Contains(t, n.awaiting, other, "another delivery's answers stay")
	n.mu.Lock()
	require.False(t, n.unlinkAwaiting(ref, n.awaiting[other]))
	n.mu.Unlock()
}
