package rmp

import (
	"net/http"
	"sync"

	"github.com/wsrkit/wsrkit/rmp/httpbody"
	"github.com/wsrkit/wsrkit/rmp/peer"
)

// ServeHTTP is the RMP endpoint (R83-R86): SOAP 1.1 and 1.2 POSTs carrying
// reliable messages, PollRequests and callback RM-Replies; another method
// gets 405 (R83). The response is written once the request's effects are
// durable: 200 with an envelope (an RM-Reply under the Response pattern, a
// poll answer), 202 without, or a SOAP Fault (500, or 400 for a SOAP 1.2
// Sender fault). The body is read with ReadRequest: gzip and deflate are
// decoded, a body over MaxBody decoded gets 413, another Content-Encoding
// 415, a spent Bodies budget 503 with Retry-After, an envelope past an
// element, depth or attribute limit its fault as soon as the limit is
// crossed; a node that stopped answers 503 (the sender resends).
func (n *Node) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "the RMP endpoint takes POST only (R83)", http.StatusMethodNotAllowed)
		return
	}
	// Parsed here, on the request's goroutine: the engine's loop only
	// applies the result.
	in, _, err := ReadRequest(w, r, httpbody.Limits{MaxBody: n.cfg.MaxBody, Budget: n.cfg.Bodies}, n.cfg.Engine.Parse)
	if err != nil {
		httpbody.WriteError(w, err)
		return
	}
	n.ServeInbound(w, r, in)
}

// ServeInbound answers an RMP POST whose body the caller has read and
// parsed with ParseRequest under the node's parse options (a router that
// looked at Inbound.GroupID first), as ServeHTTP would. The sender's
// identity comes from the request's verified client certificate unless
// the Inbound carries one already (Inbound.SetPeer). The body of an
// Inbound from ReadRequest goes back to its budget once the engine has
// taken the request: the parse is needed until then, the bytes not while
// the answer is awaited.
func (n *Node) ServeInbound(w http.ResponseWriter, r *http.Request, in *Inbound) {
	defer in.releaseBody()
	if in.peer.IsZero() {
		in.peer = peer.FromRequest(r)
	}
	if in.addr == "" {
		in.addr = clientAddr(r)
	}
	n.busy.Add(1)
	defer n.busy.Add(-1)
	ch := answerChans.Get().(chan Answer)
	n.mu.Lock()
	n.token++
	tok := n.token
	n.answers[tok] = ch
	n.mu.Unlock()
	forget := func() {
		n.mu.Lock()
		delete(n.answers, tok)
		n.mu.Unlock()
	}
	in.checkOutbound(&n.cfg.Outbound)
	err := n.enqueue(r.Context(), request{in: inboundInput{tok, in}})
	if err != nil {
		forget()
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	select {
	case a := <-ch:
		answerChans.Put(ch) // its one answer taken
		writeAnswer(w, a)
	case <-r.Context().Done():
		forget()
	}
}

// answerChans keeps the answer channels of requests that took their
// answer: a token's channel gets exactly one (release, an awaitingAnswer
// or failAnswers, each after taking it out of the node's maps under mu),
// so a drained one is free; a request that gave up leaves its channel to
// the garbage collector. Two allocations a request (#22).
var answerChans = sync.Pool{New: func() any { return make(chan Answer, 1) }}

func writeAnswer(w http.ResponseWriter, a Answer) {
	if a.ContentType != "" {
		w.Header().Set("Content-Type", a.ContentType)
	}
	w.WriteHeader(a.Status)
	if len(a.Body) > 0 {
		w.Write(a.Body)
	}
}
