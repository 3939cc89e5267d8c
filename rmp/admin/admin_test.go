package admin

import (
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/rmp/receiver"
	"github.com/wsrkit/wsrkit/rmp/sender"
)

// fake is an Engine over fixed group lists that records the aborts asked
// of it.
type fake struct {
	recv    []receiver.GroupInfo
	send    []sender.GroupInfo
	aborted []string
}

func (f *fake) ReceivingGroups() []receiver.GroupInfo { return f.recv }
func (f *fake) ReceivingGroup(id string) (receiver.GroupInfo, bool) {
	var newest receiver.GroupInfo
	found := false
	for _, g := range f.recv {
		if g.GroupID == id {
			newest, found = g, true
		}
	}
	return newest, found
}
func (f *fake) SendingGroups() []sender.GroupInfo { return f.send }
func (f *fake) SendingGroup(id string) (sender.GroupInfo, bool) {
	for _, g := range f.send {
		if g.GroupID == id {
			return g, true
		}
	}
	return sender.GroupInfo{}, false
}
func (f *fake) SendingMessage(sender.MessageRef) (sender.MessageInfo, bool) {
	return sender.MessageInfo{}, false
}

// The listings are an engine's own index (rmp tests them with the engine).
func (f *fake) ReceivingListing() *receiver.Listing                    { return nil }
func (f *fake) SendingListing() *sender.Listing                        { return nil }
func (f *fake) SendingPending(string, int) ([]sender.PendingInfo, int) { return nil, 0 }
func (f *fake) Destinations() []sender.DestinationInfo                 { return nil }
func (f *fake) ReceiverStats() receiver.Stats                          { return receiver.Stats{} }
func (f *fake) Metrics() Metrics                                       { return Metrics{} }
func (f *fake) AbortReceiving(_ time.Time, id string) bool {
	if _, ok := f.ReceivingGroup(id); !ok {
		return false
	}
	f.aborted = append(f.aborted, "receiving "+id)
	return true
}
func (f *fake) AbortSending(_ time.Time, id string) { f.aborted = append(f.aborted, "sending "+id) }

func newFake() *fake {
	return &fake{
		recv: []receiver.GroupInfo{
			{GroupID: "a", Generation: 1, Terminated: true, Ranges: []group.Range{{From: 0, To: 3}}},
			{GroupID: "a", Generation: 2, Held: 1, NextDeadline: time.Unix(9, 0), HasDeadline: true},
			{GroupID: "b", Generation: 1, NextDeadline: time.Unix(7, 0)},
		},
		send: []sender.GroupInfo{
			{GroupID: "a", Pending: 2, Acked: []group.Range{{From: 0, To: 1}}, Deadline: time.Unix(5, 0)},
			{GroupID: "c", Aborted: true},
		},
	}
}

func TestGroupsByRole(t *testing.T) {
	f := newFake()
	type row struct {
		id   string
		gen  uint64
		role group.Role
	}
	rows := func(vs []GroupView) []row {
		var out []row
		for _, v := range vs {
			out = append(out, row{v.GroupID, v.Generation, v.Role})
		}
		return out
	}
	both := rows(Groups(f, Receiving|Sending))
	want := []row{{"a", 1, group.RoleReceiver}, {"a", 2, group.RoleReceiver}, {"b", 1, group.RoleReceiver},
		{"a", 1, group.RoleSender}, {"c", 1, group.RoleSender}}
	if len(both) != len(want) {
		t.Fatalf("Groups(both) = %v, want %v", both, want)
	}
	for i := range want {
		if both[i] != want[i] {
			t.Fatalf("Groups(both) = %v, want %v", both, want)
		}
	}
	if got := Groups(f, Sending); len(got) != 2 || got[0].Role != group.RoleSender {
		t.Fatalf("Groups(Sending) = %v", rows(got))
	}
	if got := Groups(f, 0); len(got) != 0 {
		t.Fatalf("Groups(0) = %v, want none", rows(got))
	}
}

func TestGroupView(t *testing.T) {
	f := newFake()
	// The receiving side's newest generation first, its deadline only when
	// it has one.
	v, ok := Group(f, "a", Receiving|Sending)
	if !ok || v.Role != group.RoleReceiver || v.Generation != 2 || v.Held != 1 || !v.NextDeadline.Equal(time.Unix(9, 0)) {
		t.Fatalf("Group(a) = %+v, %v", v, ok)
	}
	if v, _ := Group(f, "b", Receiving); !v.NextDeadline.IsZero() {
		t.Fatalf("Group(b) deadline %v without HasDeadline", v.NextDeadline)
	}
	// The sending group: one generation, held = pending, its acked ranges
	// copied, aborted counts as terminated.
	v, ok = Group(f, "a", Sending)
	if !ok || v.Role != group.RoleSender || v.Generation != 1 || v.Held != 2 || v.Terminated || !v.NextDeadline.Equal(time.Unix(5, 0)) {
		t.Fatalf("Group(a, Sending) = %+v, %v", v, ok)
	}
	v.Ranges[0].To = 99
	if f.send[0].Acked[0].To != 1 {
		t.Fatal("a view shares the sender's ranges")
	}
	if v, ok := Group(f, "c", Receiving|Sending); !ok || !v.Terminated {
		t.Fatalf("Group(c) = %+v, %v: an aborted sending group is terminated", v, ok)
	}
	if _, ok := Group(f, "c", Receiving); ok {
		t.Fatal("Group(c, Receiving) found a sending group")
	}
}

func TestAbort(t *testing.T) {
	f := newFake()
	if !Abort(f, time.Time{}, "a", Receiving|Sending) {
		t.Fatal("Abort(a) found nothing")
	}
	// An aborted (terminated) sending group is not aborted again.
	if Abort(f, time.Time{}, "c", Sending) {
		t.Fatal("Abort(c) found an aborted group")
	}
	if Abort(f, time.Time{}, "b", Sending) {
		t.Fatal("Abort(b, Sending) found a receiving group")
	}
	got := f.aborted
	if len(got) != 2 || got[0] != "receiving a" || got[1] != "sending a" {
		t.Fatalf("aborts %q, want receiving a, sending a", got)
	}
}
