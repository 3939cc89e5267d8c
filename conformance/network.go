package conformance

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/wsrkit/wsrkit/rmp"
	"github.com/wsrkit/wsrkit/rmp/outbound"
)

// flight is one POST on the scripted network.
type flight struct {
	from string
	out  rmp.Outbound
	// at is when a delayed POST arrives; zero while held for release.
	at time.Time
	// seq keeps delayed POSTs that arrive together in send order.
	seq int
}

// rule is a scripted fault: the next count POSTs that match it get action.
type rule struct {
	action string // drop | drop-reply | dup | hold | delay
	count  int
	kind   rmp.OutboundKind // 0 matches every kind
	from   string
	number int64 // -1 matches every number
	delay  time.Duration
}

func (r *rule) matches(f flight) bool {
	if r.kind != 0 && f.out.Ref.Kind != r.kind {
		return false
	}
	if r.from != "" && r.from != f.from {
		return false
	}
	if r.number >= 0 && (f.out.Ref.Kind != rmp.OutMessage || f.out.Ref.Message.Singleton || f.out.Ref.Message.Number != uint64(r.number)) {
		return false
	}
	return true
}

// network carries POSTs between nodes at once, unless a rule says
// otherwise. It is owned by the harness and survives engine crashes, the
// way a real network outlives the processes at its ends.
type network struct {
	queue []flight
	rules []*rule
	// held are POSTs held for release or delayed until their at.
	held []flight
	// remote are POSTs to a destination with no node, waiting for the
	// scenario to answer them with respond.
	remote []flight
	seq    int
}

var errLost = errors.New("connection lost")

func (nw *network) take(f flight) *rule {
	for i, r := range nw.rules {
		if r.matches(f) {
			r.count--
			if r.count <= 0 {
				nw.rules = append(nw.rules[:i], nw.rules[i+1:]...)
			}
			return r
		}
	}
	return nil
}

// pump carries every queued POST, including those the deliveries cause.
func (h *harness) pump() {
	for h.fatal == nil && len(h.net.queue) > 0 {
		f := h.net.queue[0]
		h.net.queue = h.net.queue[1:]
		h.printf("%s: send %s -> %s", f.from, h.outboundText(f.out), h.where(f.out.Post.URL))
		r := h.net.take(f)
		action := ""
		if r != nil {
			action = r.action
		}
		switch action {
		case "drop":
			h.printf("net: lost request")
			h.result(f, outbound.PostResult{}, errLost)
		case "hold", "delay":
			h.net.seq++
			f.seq = h.net.seq
			if action == "delay" {
				f.at = h.now.Add(r.delay)
				h.printf("net: delayed until %s", h.rel(f.at))
			} else {
				h.printf("net: held")
			}
			h.net.held = append(h.net.held, f)
		default:
			h.deliver(f, action)
		}
	}
}

// deliver hands f to its destination and its answer back to the sender.
func (h *harness) deliver(f flight, action string) {
	dst := h.nodeByURL(f.out.Post.URL)
	if dst == nil {
		h.printf("net: awaiting respond")
		h.net.remote = append(h.net.remote, f)
		return
	}
	copies := 1
	if action == "dup" {
		copies = 2
		h.printf("net: duplicated")
	}
	var a rmp.Answer
	for range copies {
		dst.token++
		tok := dst.token
		dst.e.Receive(h.now, tok, f.out.Post.ContentType, f.out.Post.Body)
		h.drain(dst)
		if h.fatal != nil {
			return
		}
		var ok bool
		a, ok = dst.answers[tok]
		if !ok {
			h.fatal = fmt.Errorf("%s gave no answer to a POST", dst.name)
			return
		}
		delete(dst.answers, tok)
		h.printAnswer(dst, a)
	}
	if action == "drop-reply" {
		h.printf("net: lost response")
		h.result(f, outbound.PostResult{}, errLost)
		return
	}
	h.result(f, outbound.PostResult{Status: a.Status, ContentType: a.ContentType, Body: a.Body}, nil)
}

// result reports a POST's fate to the node that sent it.
func (h *harness) result(f flight, res outbound.PostResult, err error) {
	n, ok := h.nodes[f.from]
	if !ok {
		return
	}
	n.e.SendResult(h.now, f.out.Ref, res, err)
	h.drain(n)
}

// releaseDue delivers the delayed POSTs whose time has come, in order.
func (nw *network) releaseDue(h *harness) {
	var due, keep []flight
	for _, f := range nw.held {
		if !f.at.IsZero() && !f.at.After(h.now) {
			due = append(due, f)
		} else {
			keep = append(keep, f)
		}
	}
	nw.held = keep
	sort.SliceStable(due, func(i, j int) bool {
		if !due[i].at.Equal(due[j].at) {
			return due[i].at.Before(due[j].at)
		}
		return due[i].seq < due[j].seq
	})
	for _, f := range due {
		h.printf("net: arrives %s from %s", h.outboundText(f.out), f.from)
		h.deliver(f, "")
		h.pump()
	}
}

func (nw *network) nextRelease() (time.Time, bool) {
	var best time.Time
	found := false
	for _, f := range nw.held {
		if !f.at.IsZero() && (!found || f.at.Before(best)) {
			best, found = f.at, true
		}
	}
	return best, found
}

// release delivers the held POSTs (not the delayed ones), in send order or
// reversed.
func (h *harness) release(reverse bool) int {
	var rel, keep []flight
	for _, f := range h.net.held {
		if f.at.IsZero() {
			rel = append(rel, f)
		} else {
			keep = append(keep, f)
		}
	}
	h.net.held = keep
	if reverse {
		for i, j := 0, len(rel)-1; i < j; i, j = i+1, j-1 {
			rel[i], rel[j] = rel[j], rel[i]
		}
	}
	for _, f := range rel {
		h.printf("net: arrives %s from %s", h.outboundText(f.out), f.from)
		h.deliver(f, "")
		h.pump()
	}
	return len(rel)
}
