package sim

import (
	"bytes"
	"strconv"

	"github.com/wsrkit/wsrkit/rmp"
	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/rmp/receiver"
	"github.com/wsrkit/wsrkit/rmp/sender"
)

// Business responses (R73, D18). Under the Response pattern the consumer
// answers three messages in four with a business response that names the
// message; the answer that acknowledges the message waits for it (Answer.
// Await) and carries it, and every duplicate's answer carries the cached
// copy. The producer's side checks each response it sees is exactly its
// own message's.

// respMark opens a business response; the message id follows.
var respMark = []byte(`<r xmlns="urn:sim:r">`)

// businessResponse is what the consumer returns for message id.
func businessResponse(id int) []byte {
	return append(strconv.AppendInt(append([]byte(nil), respMark...), int64(id), 10), "</r>"...)
}

// responds says whether the consumer returns a business response for
// message id (a request-response operation under the Response pattern).
func (wd *world) responds(id int) bool {
	return wd.w.groups[wd.w.msgs[id].g].pattern == group.ReplyResponse && id%4 != 0
}

// awaited is an answer held until its message's consumer returned.
type awaited struct {
	r request
	a rmp.Answer
}

// hold parks an answer that waits for its delivery in the same Ready.
func (n *node) hold(r request, a rmp.Answer) {
	if n.awaiting == nil {
		n.awaiting = map[receiver.DeliveryRef]awaited{}
	}
	n.awaiting[*a.Await] = awaited{r, a}
}

// complete releases the answer waiting for ref, with resp when the
// consumer took the message and gave one.
func (n *node) complete(ref receiver.DeliveryRef, resp []byte) {
	w, ok := n.awaiting[ref]
	if !ok {
		return
	}
	delete(n.awaiting, ref)
	if resp != nil {
		n.wd.res.Responses++
		w.a = w.a.WithBusinessResponse(resp)
	}
	n.wd.answer(w.r, w.a)
}

// releaseAwaiting answers, as they are, the answers whose delivery was not
// in their Ready: Await names a delivery of the same Ready (rmp Answer).
func (n *node) releaseAwaiting() {
	if len(n.awaiting) == 0 {
		return
	}
	n.wd.violate(-1, "R73: %s: %d answers await deliveries that were not in their Ready", n.name, len(n.awaiting))
	clear(n.awaiting)
}

// outcomeResponse checks the business response an outcome carries, also
// when it is reported again after a restart (the outbox keeps it): only an
// Acknowledged outcome of a request-response message has one, and it is
// exactly that message's (R73).
func (m *model) outcomeResponse(o sender.Outcome) {
	if o.Response == nil {
		return
	}
	id, ok := m.byRef[o.Ref]
	if !ok {
		return // reported as an outcome for a message never submitted
	}
	if o.Kind != sender.Acknowledged || !m.wd.responds(id) || !sameResponse(o.Response, id) {
		m.wd.violate(id, "R73: outcome %v carries business response %.64q", o.Kind, o.Response)
		return
	}
	m.wd.res.ResponsesOnOutcome++
}

// sameResponse reports whether b is message id's business response as a
// Node renders a Body's content: the element standalone, so with the
// envelope's namespace declarations added to its start tag.
func sameResponse(b []byte, id int) bool {
	open := respMark[:len(respMark)-1] // without the closing '>'
	end := bytes.IndexByte(b, '>')
	return bytes.HasPrefix(b, open) && end > 0 &&
		bytes.Equal(b[end+1:], append(strconv.AppendInt(nil, int64(id), 10), "</r>"...))
}

// answered checks a business response that reached the producer's side
// in the answer to a transmission of message ref (R73, D18): only
// request-response messages have one, and it is exactly theirs.
func (m *model) answered(ref rmp.OutboundRef, body []byte) {
	i := bytes.Index(body, respMark)
	if i < 0 {
		return
	}
	id, ok := m.byRef[ref.Message]
	if !ok {
		return // a message whose submission was lost with its Persist
	}
	want := businessResponse(id)
	if !m.wd.responds(id) || !bytes.Equal(body[i:min(len(body), i+len(want))], want) || !m.recs[id].responded {
		end := min(len(body), i+64)
		m.wd.violate(id, "R73/D18: the answer to its transmission carries business response %q (consumer responded: %v)", body[i:end], m.recs[id].responded)
		return
	}
	m.wd.res.ResponsesSeen++
}
