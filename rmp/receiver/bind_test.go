package receiver

import (
	"strings"
	"testing"

	"github.com/wsrkit/wsrkit/rmp/group"
)

func takeLog(h *harness) string {
	s := strings.Join(h.log, "\n")
	h.log = nil
	return s
}

// TestGroupsBoundToTheirPeer: under BindGroupsToPeer a group opened by
// verified identity A refuses a message from B with InvalidMessageId in this
// request's Response (not to B's ReplyTo), tells B's PollRequest nothing
// of it, and keeps serving A, across a restart (the identity is stored); without the option, or for a group opened with
// no identity or an unverified one (an IP address), anyone may send (#19
// item 5).
func TestGroupsBoundToTheirPeer(t *testing.T) {
	const a, b = VerifiedPeerPrefix + "spiffe://t/a", VerifiedPeerPrefix + "spiffe://t/b"
	for _, restart := range []bool{false, true} {
		h := newHarness(t, Config{BindGroupsToPeer: true})
		h.msg(seq("g", 0, from(a)))
		h.msg(seq("anon", 0))
		if restart {
			h.restart()
		}
		takeLog(h)
		cb := func(m *Message) {
			m.Pattern, m.ReplyTo = group.ReplyCallback, "http://b.test/steal"
		}
		h.msg(seq("g", 1, from(b), cb))
		got := takeLog(h)
		if want := "reply g[1!InvalidMessageId]\nrefused g#0/1 InvalidMessageId " + LabelForeignPeer; got != want {
			t.Fatalf("restart=%v: B into A's group:\n%s\nwant\n%s", restart, got, want)
		}
		h.poll(PollRequest{Refs: []group.PollRef{{GroupID: "g"}}, Peer: b})
		if got := takeLog(h); got != "poll -\nrefused g#0 "+LabelForeignPeerPoll {
			t.Fatalf("B's poll about A's group: %s", got)
		}
		h.poll(PollRequest{Refs: []group.PollRef{{GroupID: "g"}}, Peer: a})
		if got := takeLog(h); got != "poll g[0]" {
			t.Fatalf("A's poll: %s", got)
		}
		h.msg(seq("g", 1, from(a), func(m *Message) { m.Last = true }))
		if got := takeLog(h); !strings.Contains(got, "reply g[1]") || strings.Contains(got, "refused") {
			t.Fatalf("A's next message: %s", got)
		}
		h.msg(seq("anon", 1, from(b)))
		if got := takeLog(h); strings.Contains(got, "refused") {
			t.Fatalf("a group opened without an identity is bound to no one: %s", got)
		}
	}

	h := newHarness(t, Config{})
	h.msg(seq("g", 0, from(a)))
	h.msg(seq("g", 1, from(b)))
	if got := takeLog(h); strings.Contains(got, "refused") {
		t.Fatalf("without BindGroupsToPeer: %s", got)
	}
	h = newHarness(t, Config{BindGroupsToPeer: true})
	h.msg(seq("g", 0, from("ip:192.0.2.1")))
	h.msg(seq("g", 1, from(b)))
	if got := takeLog(h); strings.Contains(got, "refused") {
		t.Fatalf("an unverified opener binds nothing: %s", got)
	}
}

// TestGroupsRefusedByTheDriver: a message into a groupId Config.AllowGroup
// refuses its sender (the gateway's -peer-allow prefixes) is refused with
// InvalidMessageId in its own Response and nothing is stored, even for a
// group that exists; a PollRequest reference to one is answered as about
// an unknown group (#19 item 5).
func TestGroupsRefusedByTheDriver(t *testing.T) {
	const a, b = VerifiedPeerPrefix + "urn:a", VerifiedPeerPrefix + "urn:b"
	h := newHarness(t, Config{AllowGroup: func(peer, groupID string) bool { return peer == a || groupID != "g" }})
	h.msg(seq("g", 0, from(a)))
	takeLog(h)
	h.msg(seq("g", 1, from(b)))
	if got, want := takeLog(h), "reply g[1!InvalidMessageId]\nrefused g#0/1 InvalidMessageId "+LabelGroupNotAllowed; got != want {
		t.Fatalf("a refused groupId:\n%s\nwant\n%s", got, want)
	}
	h.poll(PollRequest{Refs: []group.PollRef{{GroupID: "g"}, {GroupID: "other"}}, Peer: b})
	if got := takeLog(h); got != "poll -\nrefused g#0 "+LabelPollGroupNotAllowed {
		t.Fatalf("a refused poll reference: %s", got)
	}
	h.msg(seq("g", 1, from(a)))
	if got := takeLog(h); !strings.Contains(got, "deliver g") || !strings.Contains(got, "reply g[1]") {
		t.Fatalf("1 was not stored by the refusal, so it is new now: %s", got)
	}
}
