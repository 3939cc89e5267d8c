package receiver

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/group"
)

func from(peer string) mopt { return func(m *Message) { m.Peer = peer } }

// lastRefusal is the label of the last refused event in h's log, "" if none.
func lastLine(h *harness) string {
	if len(h.log) == 0 {
		return ""
	}
	return h.log[len(h.log)-1]
}

func TestMaxLifetimeRefusesFarExpiries(t *testing.T) {
	// #18 item 3: no accepted message keeps state beyond MaxLifetime.
	cfg := DefaultConfig()
	cfg.MaxLifetime = 7 * 24 * time.Hour
	h := newHarness(t, cfg)
	week := 7 * 24 * time.Hour
	cases := []struct {
		m    Message
		code faults.Code
		rule string
	}{
		{single("urn:far", exp(week+time.Second)), faults.InvalidExpiryTime, "receiver.expiry-beyond-max-lifetime"},
		{single("urn:9999", func(m *Message) { m.Expiry = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC) }), faults.InvalidExpiryTime, "receiver.expiry-beyond-max-lifetime"},
		{seq("urn:gexp", 0, gexp(week+time.Minute)), faults.InvalidExpiryTime, "receiver.group-expiry-beyond-max-lifetime"},
		{seq("urn:idle", 0, idle(week+time.Second)), faults.InvalidMessageParameters, "receiver.max-idle-beyond-max-lifetime"},
		{seq("urn:idle-years", 0, func(m *Message) {
			m.Timing.MaxIdle, m.Timing.HasMaxIdle = group.Duration{Years: 99999999999}, true
		}), faults.InvalidMessageParameters, "receiver.max-idle-beyond-max-lifetime"},
		{seq("urn:idle-month", 0, func(m *Message) {
			m.Timing.MaxIdle, m.Timing.HasMaxIdle = group.Duration{Months: 1}, true
		}), faults.InvalidMessageParameters, "receiver.max-idle-beyond-max-lifetime"},
	}
	for _, c := range cases {
		h.msg(c.m)
		got := strings.Join(h.log, "\n")
		want := fmt.Sprintf("refused %s#0", c.m.GroupID)
		if !strings.Contains(got, want) || !strings.Contains(lastLine(h), c.code.String()+" "+c.rule) {
			t.Fatalf("%s: want %s %s, log:\n%s", c.m.GroupID, c.code, c.rule, got)
		}
		h.log = nil
	}
	if n := h.r.Stats().Groups; n != 0 {
		t.Fatalf("%d groups opened by refused messages", n)
	}
	// Within the bound: accepted.
	h.msg(single("urn:near", exp(week)))
	h.msg(seq("urn:near-group", 0, gexp(week), idle(week)))
	if n := h.r.Stats().Groups; n != 2 {
		t.Fatalf("%d groups within the bound, want 2; log:\n%s", n, strings.Join(h.log, "\n"))
	}
}

func TestMaxGroupsPerPeerRefusesOnlyThatPeer(t *testing.T) {
	// #18 item 3: a peer at its quota of open groups gets
	// MessageStoreOverflow (D15); other peers still open groups, also
	// after a restart, and the peer's next group is accepted once one of
	// its groups is gone.
	cfg := DefaultConfig()
	cfg.MaxGroupsPerPeer = 3
	h := newHarness(t, cfg)
	for i := range 3 {
		h.msg(single(fmt.Sprintf("urn:a%d", i), from("10.0.0.1"), exp(time.Duration(i+1)*time.Minute)))
	}
	h.log = nil
	h.msg(single("urn:a3", from("10.0.0.1")))
	if !strings.Contains(lastLine(h), "MessageStoreOverflow receiver.too-many-groups-peer") {
		t.Fatalf("over quota: %v", h.log)
	}
	h.msg(single("urn:b0", from("10.0.0.2")))
	h.msg(single("urn:anon"))
	h.restart()
	h.log = nil
	h.msg(single("urn:a4", from("10.0.0.1")))
	if !strings.Contains(lastLine(h), "MessageStoreOverflow receiver.too-many-groups-peer") {
		t.Fatalf("quota after a restart: %v", h.log)
	}
	h.msg(single("urn:b1", from("10.0.0.2")))
	if n := h.r.Stats().Groups; n != 6 {
		t.Fatalf("%d groups, want 3 of a, 2 of b (and the anonymous one): log %v", n, h.log)
	}
	// urn:a0 expires after a minute and is removed (D17): room again.
	h.at(time.Minute + 2*time.Second)
	h.tick()
	h.log = nil
	h.msg(single("urn:a5", from("10.0.0.1"), exp(time.Hour)))
	if strings.Contains(strings.Join(h.log, "\n"), "refused") {
		t.Fatalf("after a removal: %v", h.log)
	}
}
