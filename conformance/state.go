package conformance

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/rmp/receiver"
	"github.com/wsrkit/wsrkit/store"
)

// cmdState prints the groups of an RMP as its store holds them: the
// durable state that a restart recovers (R89–R93), identical in every mode.
func (h *harness) cmdState(a *args) error {
	n, err := h.node(a.str("on", "r"))
	if err != nil {
		return err
	}
	only := a.str("group", "")
	if err := a.done(); err != nil {
		return err
	}
	deadlines := map[string]string{}
	for d, err := range n.st.DueBefore(store.MaxInstant()) {
		if err != nil {
			return err
		}
		deadlines[fmt.Sprintf("%d/%s/%d", d.Role, d.ID.GroupID, d.ID.Generation)] = h.rel(d.At)
	}
	lines := 0
	for _, role := range []group.Role{group.RoleReceiver, group.RoleSender} {
		for id, err := range n.st.Generations(role) {
			if err != nil {
				return err
			}
			if id.GroupID == "" || (only != "" && id.GroupID != only) {
				continue
			}
			line, err := h.generationText(n, role, id)
			if err != nil {
				return err
			}
			if d, ok := deadlines[fmt.Sprintf("%d/%s/%d", role, id.GroupID, id.Generation)]; ok {
				line += " timer=" + d
			}
			h.printf("%s", line)
			lines++
		}
	}
	if lines == 0 {
		h.printf("%s: no group state", n.name)
	}
	return nil
}

// generationText renders one stored generation: the numbers of each kind of
// record, received runs merged into ranges.
func (h *harness) generationText(n *node, role group.Role, id group.ID) (string, error) {
	side := "receiving"
	if role == group.RoleSender {
		side = "sending"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s %s gen=%d", n.name, side, id.GroupID, id.Generation)
	set := group.NewSeqSet(0)
	byKind := map[group.Kind][]uint64{}
	for rec, err := range n.st.Scan(store.GenerationPrefix(role, id)) {
		if err != nil {
			return "", err
		}
		k := rec.Key
		if k.Kind == group.KindReceived {
			to := k.Number
			if len(rec.Value) > 1 {
				if v, m := binary.Uvarint(rec.Value[1:]); m > 0 {
					to = v
				}
			}
			if _, err := set.AddRange(group.Range{From: k.Number, To: to}); err != nil {
				return "", err
			}
			continue
		}
		byKind[k.Kind] = append(byKind[k.Kind], k.Number)
	}
	if rs := set.AppendRanges(nil); len(rs) > 0 {
		label := "received"
		if role == group.RoleSender {
			label = "acked"
		}
		b.WriteString(" " + label + "=" + rangesText(rs))
	}
	for _, k := range []struct {
		kind  group.Kind
		label string
	}{{group.KindHeld, "held"}, {group.KindDelivery, "to-deliver"}, {group.KindReply, "replies"},
		{group.KindResponse, "responses"}, {group.KindOutbound, "unacked"}, {group.KindOutcome, "outbox"}} {
		if ns := byKind[k.kind]; len(ns) > 0 {
			parts := make([]string, len(ns))
			for i, x := range ns {
				parts[i] = fmt.Sprint(x)
			}
			fmt.Fprintf(&b, " %s={%s}", k.label, strings.Join(parts, " "))
		}
	}
	if role == group.RoleSender {
		if gi, ok := n.e.Admin().SendingGroup(id.GroupID); ok {
			if gi.Key != "" {
				b.WriteString(" key=" + gi.Key)
			}
			switch {
			case gi.Aborted:
				b.WriteString(" aborted")
			case gi.Terminated:
				b.WriteString(" terminated rule=" + gi.Rule.String())
			case gi.Closed:
				b.WriteString(" closed")
			}
		}
	}
	return b.String(), nil
}

// cmdGroups prints the receiving groups an operator lists (gateway GET
// /v1/groups?role=receiver): the engine's view, not the store's.
func (h *harness) cmdGroups(a *args) error {
	n, err := h.node(a.str("on", "r"))
	if err != nil {
		return err
	}
	if err := a.done(); err != nil {
		return err
	}
	gs := n.e.Admin().ReceivingGroups()
	if len(gs) == 0 {
		h.printf("%s: no receiving group listed", n.name)
	}
	for _, g := range gs {
		h.printf("%s: group %s", n.name, h.groupInfoText(g))
	}
	return nil
}

// groupInfoText renders a listed receiving generation: open or terminated
// with its rule, received ranges, held count, last number and next timer.
func (h *harness) groupInfoText(g receiver.GroupInfo) string {
	s := gid(group.ID{GroupID: g.GroupID, Generation: g.Generation})
	if g.Terminated {
		s += " terminated rule=" + g.Rule.String()
	} else {
		s += " open"
	}
	if g.Singleton {
		s += " singleton"
	}
	if len(g.Ranges) > 0 {
		s += " received=" + rangesText(g.Ranges)
	}
	s += fmt.Sprintf(" held=%d", g.Held)
	if g.HasLast {
		s += fmt.Sprintf(" last=%d", g.LastNumber)
	}
	if g.HasDeadline {
		s += " timer=" + h.rel(g.NextDeadline)
	}
	return s
}
