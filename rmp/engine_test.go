package rmp

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/rmp/outbound"
	"github.com/wsrkit/wsrkit/rmp/receiver"
	"github.com/wsrkit/wsrkit/rmp/sender"
	"github.com/wsrkit/wsrkit/soap"
	"github.com/wsrkit/wsrkit/store"
	"github.com/wsrkit/wsrkit/store/memstore"
)

var epoch = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// side is one engine over its store, applied the way a driver would.
type side struct {
	t     *testing.T
	name  string
	cfg   Config
	st    store.Store
	e     *Engine
	token uint64
	// what came out
	delivered []string
	outcomes  []string
	answers   map[uint64]Answer
	sends     []Outbound
	// failDeliveries makes the consumer refuse hand-offs.
	failDeliveries bool
	// onOutcome, when set, sees every outcome handed to the producer.
	onOutcome func(sender.Outcome)
}

func newSide(t *testing.T, name string, cfg Config) *side {
	s := &side{t: t, name: name, cfg: cfg, st: memstore.New(memstore.Options{}), answers: map[uint64]Answer{}}
	s.restart()
	return s
}

func (s *side) restart() {
	e, err := LoadEngine(s.cfg, s.st)
	require.NoError(s.t, err)
	s.e = e
	s.sends = nil
}

// drain applies every Ready until none is left: persist, answers, sends are
// queued, deliveries go to the consumer, outcomes to the producer.
func (s *side) drain(now time.Time) {
	for s.e.HasReady() {
		rd := s.e.Ready()
		require.NoError(s.t, s.st.Apply(rd.Persist))
		s.e.Advance()
		for _, a := range rd.Answers {
			s.answers[a.Token] = a
		}
		s.sends = append(s.sends, rd.Sends...)
		for _, d := range rd.Deliver {
			if s.failDeliveries {
				s.e.DeliveryFailed(now, d.Ref)
				continue
			}
			s.delivered = append(s.delivered, bodyText(d.Payload))
			s.e.Taken(now, d.Ref)
		}
		for _, o := range rd.Notify {
			if s.onOutcome != nil {
				s.onOutcome(o)
			}
			s.outcomes = append(s.outcomes, outcomeText(o))
			s.e.OutcomeHandled(now, o.ID)
		}
	}
}

func bodyText(envelope []byte) string {
	s := string(envelope)
	i := strings.Index(s, "<p>")
	j := strings.Index(s, "</p>")
	if i < 0 || j < i {
		return "?" + s
	}
	return s[i+3 : j]
}

func outcomeText(o sender.Outcome) string {
	n := fmt.Sprint(o.Ref.Number)
	if o.Ref.Singleton {
		n = "-"
	}
	if o.Kind == sender.Acknowledged {
		return n + " acknowledged"
	}
	return n + " failed " + o.Reason.String()
}

// link carries s's sends to r and r's answers back, dropping the POSTs
// for which drop returns true (the sender then sees no response).
func link(now time.Time, s, r *side, drop func(i int, o Outbound) bool) int {
	sends := s.sends
	s.sends = nil
	for i, o := range sends {
		if drop != nil && drop(i, o) {
			s.e.SendResult(now, o.Ref, outbound.PostResult{}, fmt.Errorf("dropped"))
			continue
		}
		r.token++
		tok := r.token
		r.e.Receive(now, tok, o.Post.ContentType, o.Post.Body)
		r.drain(now)
		a, ok := r.answers[tok]
		require.True(s.t, ok, "no answer for token %d", tok)
		s.e.SendResult(now, o.Ref, outbound.PostResult{Status: a.Status, ContentType: a.ContentType, Body: a.Body}, nil)
	}
	s.drain(now)
	return len(sends)
}

func engineConfig(id string) Config {
	cfg := Config{}
	cfg.Sender.InstanceID = id
	cfg.Sender.Retry = sender.RetryPolicy{Interval: time.Second, Backoff: 2, MaxInterval: 8 * time.Second, MaxRetries: 5}
	return cfg
}

func submission(key string, n int, last bool) Submission {
	return Submission{
		To: "http://receiver.test/rmp", GroupKey: key, Last: last,
		Flags:    group.Flags{AckRequested: true, DuplicateElimination: true, MessageOrder: key != ""},
		Lifetime: time.Minute, Pattern: group.ReplyResponse,
		Payload: []byte(fmt.Sprintf("<p>m%d</p>", n)),
	}
}

func TestEngineOrderedExactlyOnceOverLossyLink(t *testing.T) {
	// R47, R42, R44, D8, D18: an ordered exactly-once group of five over a
	// link that loses the first transmission of message 1 and the answer to
	// message 3; resends fill the gap, duplicates are acked, not delivered.
	s := newSide(t, "sender", engineConfig("s1"))
	r := newSide(t, "receiver", engineConfig("r1"))
	now := epoch
	for i := range 5 {
		_, err := s.e.Submit(now, submission("orders", i, i == 4))
		require.NoError(t, err)
	}
	s.drain(now)
	require.Len(t, s.sends, 5)
	link(now, s, r, func(i int, o Outbound) bool { return i == 1 })
	require.Equal(t, []string{"m0"}, r.delivered, "2..4 wait behind the lost 1 (D14)")

	for step := 0; step < 10 && len(s.outcomes) < 5; step++ {
		now = now.Add(time.Second + time.Millisecond)
		s.e.Tick(now)
		s.drain(now)
		link(now, s, r, nil)
	}
	require.Equal(t, []string{"m0", "m1", "m2", "m3", "m4"}, r.delivered, "in order, each once")
	require.ElementsMatch(t, []string{"0 acknowledged", "1 acknowledged", "2 acknowledged", "3 acknowledged", "4 acknowledged"}, s.outcomes)
}

func TestEngineRestartBothSidesMidGroup(t *testing.T) {
	// R89, R91, D27: both engines are rebuilt from their stores between the
	// first and the second half of a group; numbering continues, nothing is
	// delivered twice, every outcome is reported once.
	s := newSide(t, "sender", engineConfig("s1"))
	r := newSide(t, "receiver", engineConfig("r1"))
	now := epoch
	for i := range 3 {
		_, err := s.e.Submit(now, submission("g", i, false))
		require.NoError(t, err)
	}
	s.drain(now)
	// Message 2's answer is lost, then both sides restart.
	link(now, s, r, nil)
	s.restart()
	r.restart()
	for i := 3; i < 5; i++ {
		ref, err := s.e.Submit(now, submission("g", i, i == 4))
		require.NoError(t, err)
		require.Equal(t, uint64(i), ref.Number, "R90: no number reused after a restart")
	}
	s.drain(now)
	for step := 0; step < 10 && len(s.outcomes) < 5; step++ {
		link(now, s, r, nil)
		now = now.Add(2 * time.Second)
		s.e.Tick(now)
		s.drain(now)
		r.e.Tick(now)
		r.drain(now)
	}
	require.Equal(t, []string{"m0", "m1", "m2", "m3", "m4"}, r.delivered)
	require.Len(t, s.outcomes, 5)
}

func TestEngineAnswersUnreadableRequestsWithSOAPFaults(t *testing.T) {
	// R38, D7, R86: a request that cannot be identified gets a SOAP Fault
	// InvalidRequest in its own SOAP version; a wrong content type gets 415.
	r := newSide(t, "receiver", engineConfig("r1"))
	cases := []struct {
		ct, body, want string
		status         int
	}{
		{"text/xml; charset=utf-8", "<not-soap/>", "InvalidRequest", 500},
		{"application/soap+xml; charset=utf-8", `<S:Envelope xmlns:S="http://www.w3.org/2003/05/soap-envelope"><S:Body/></S:Envelope>`, "InvalidRequest", 400},
		{"text/plain", "x", "Content-Type", 415},
	}
	for i, c := range cases {
		r.e.Receive(epoch, uint64(i+1), c.ct, []byte(c.body))
		r.drain(epoch)
		a := r.answers[uint64(i+1)]
		require.Equal(t, c.status, a.Status, "case %d", i)
		require.Contains(t, string(a.Body), c.want, "case %d", i)
	}
}

func TestEngineCallbackPattern(t *testing.T) {
	// R74, R31: under Callback the HTTP response carries no RM-Reply; the
	// ack is POSTed to ReplyTo and acknowledges the message at the sender.
	s := newSide(t, "sender", engineConfig("s1"))
	r := newSide(t, "receiver", engineConfig("r1"))
	sub := submission("", 0, false)
	sub.Pattern = group.ReplyCallback
	sub.ReplyTo = "http://sender.test/rmp"
	_, err := s.e.Submit(epoch, sub)
	require.NoError(t, err)
	s.drain(epoch)
	link(epoch, s, r, nil)
	require.Equal(t, []string{"m0"}, r.delivered)
	require.Empty(t, s.outcomes, "no ack in the HTTP response under Callback")
	require.Len(t, r.sends, 1)
	require.Equal(t, OutCallback, r.sends[0].Ref.Kind)
	require.Equal(t, "http://sender.test/rmp", r.sends[0].Post.URL)
	link(epoch, r, s, nil)
	require.Equal(t, []string{"- acknowledged"}, s.outcomes)
}

func TestEnginePollPattern(t *testing.T) {
	// R32, R77: under Poll the sender asks for the status of unacknowledged
	// messages; the poll answer acknowledges them.
	cfg := engineConfig("s1")
	cfg.Sender.PollInterval = 2 * time.Second
	s := newSide(t, "sender", cfg)
	r := newSide(t, "receiver", engineConfig("r1"))
	sub := submission("g", 0, false)
	sub.Pattern = group.ReplyPoll
	_, err := s.e.Submit(epoch, sub)
	require.NoError(t, err)
	s.drain(epoch)
	link(epoch, s, r, nil)
	require.Equal(t, []string{"m0"}, r.delivered)
	require.Empty(t, s.outcomes)
	now := epoch
	for step := 0; step < 5 && len(s.outcomes) == 0; step++ {
		now = now.Add(time.Second)
		s.e.Tick(now)
		s.drain(now)
		for _, o := range s.sends {
			if o.Ref.Kind == OutPoll {
				require.Contains(t, string(o.Post.Body), "PollRequest")
			}
		}
		link(now, s, r, nil)
	}
	require.Equal(t, []string{"0 acknowledged"}, s.outcomes)
	require.Equal(t, []string{"m0"}, r.delivered, "a resend, if any, is not delivered again")
}

func TestEngineSOAP12Submission(t *testing.T) {
	s := newSide(t, "sender", engineConfig("s1"))
	r := newSide(t, "receiver", engineConfig("r1"))
	sub := submission("", 7, false)
	sub.Version = soap.SOAP12
	_, err := s.e.Submit(epoch, sub)
	require.NoError(t, err)
	s.drain(epoch)
	require.Len(t, s.sends, 1)
	require.True(t, strings.HasPrefix(s.sends[0].Post.ContentType, "application/soap+xml"))
	link(epoch, s, r, nil)
	require.Equal(t, []string{"m7"}, r.delivered)
	require.Equal(t, []string{"- acknowledged"}, s.outcomes)
}

func TestEngineConsumerFailureThenRecovery(t *testing.T) {
	// D8, R92: a consumer that refuses a hand-off gets it again later; the
	// ack (durable acceptance) is not held back by the consumer.
	s := newSide(t, "sender", engineConfig("s1"))
	r := newSide(t, "receiver", engineConfig("r1"))
	r.failDeliveries = true
	_, err := s.e.Submit(epoch, submission("", 1, false))
	require.NoError(t, err)
	s.drain(epoch)
	link(epoch, s, r, nil)
	require.Empty(t, r.delivered)
	require.Equal(t, []string{"- acknowledged"}, s.outcomes)
	r.failDeliveries = false
	now := epoch
	for step := 0; step < 20 && len(r.delivered) == 0; step++ {
		d, ok := r.e.NextDeadline()
		require.True(t, ok, "a retry must be scheduled")
		if d.After(now) {
			now = d
		}
		r.e.Tick(now)
		r.drain(now)
	}
	require.Equal(t, []string{"m1"}, r.delivered)
	_ = http.StatusOK
}

func TestEngineRefusesBadSubmissions(t *testing.T) {
	s := newSide(t, "sender", engineConfig("s1"))
	sub := submission("", 0, false)
	sub.Version = 9
	_, err := s.e.Submit(epoch, sub)
	require.ErrorIs(t, err, sender.ErrInvalidSubmission)
	sub = submission("", 0, false)
	sub.Pattern = group.ReplyCallback // no ReplyTo anywhere (R18)
	_, err = s.e.Submit(epoch, sub)
	require.ErrorIs(t, err, sender.ErrInvalidSubmission)
	require.False(t, s.e.HasReady(), "a refused submission changes nothing")
	_ = receiver.DeliveryRef{}
}

// TestEngineRecycle: a recycled Ready's slices carry the next Ready's
// effects, emptied first (no stale mutation behind the new ones), and the
// Ready handed over before stays as it was until recycled.
func TestEngineRecycle(t *testing.T) {
	e, err := LoadEngine(engineConfig("s1"), memstore.New(memstore.Options{}))
	require.NoError(t, err)
	for i := range 3 {
		_, err := e.Submit(epoch, submission(fmt.Sprintf("k%d", i), i, false))
		require.NoError(t, err)
	}
	first := e.Ready()
	e.Advance()
	require.Greater(t, len(first.Persist), 3)
	kept := append([]group.Mutation(nil), first.Persist...)

	_, err = e.Submit(epoch, submission("other", 9, false))
	require.NoError(t, err)
	second := e.Ready()
	require.Equal(t, kept, first.Persist, "a Ready handed over is not reused before recycle")
	e.Advance()

	e.Recycle(first)
	require.Zero(t, first.Persist[len(first.Persist)-1], "recycled slices are emptied")
	_, err = e.Submit(epoch, submission("again", 10, false))
	require.NoError(t, err)
	third := e.Ready()
	require.Same(t, &first.Persist[:1][0], &third.Persist[:1][0], "the recycled backing array is reused")
	require.Len(t, third.Persist, len(second.Persist), "only the new submission's mutations")
	for _, m := range third.Persist {
		require.NotEqual(t, kept[len(kept)-1], m)
	}
}

// submitOne submits one message at s, carries its POST to r and returns
// the message, the POST and r's answer, which s has not seen yet.
func submitOne(t *testing.T, now time.Time, s, r *side) (sender.MessageRef, Outbound, Answer) {
	t.Helper()
	ref, err := s.e.Submit(now, submission("g", 0, false))
	require.NoError(t, err)
	s.drain(now)
	require.Len(t, s.sends, 1)
	o := s.sends[0]
	s.sends = nil
	r.token++
	r.e.Receive(now, r.token, o.Post.ContentType, o.Post.Body)
	r.drain(now)
	a, ok := r.answers[r.token]
	require.True(t, ok, "no answer")
	return ref, o, a
}

// A response the driver parsed off the loop (WithParsedReply) is applied
// as parsed: the engine does not read the body again.
func TestEngineSendResultParsedByDriver(t *testing.T) {
	s := newSide(t, "sender", engineConfig("s1"))
	r := newSide(t, "receiver", engineConfig("r1"))
	now := epoch
	_, o, a := submitOne(t, now, s, r)
	res := outbound.PostResult{Status: a.Status, ContentType: a.ContentType, Body: a.Body}.WithParsedReply(s.e.cfg.Parse)
	res.Body = []byte("not an envelope")
	s.e.SendResult(now, o.Ref, res, nil)
	s.drain(now)
	require.Equal(t, []string{"0 acknowledged"}, s.outcomes)
}

// R73 through the engine alone: an answer rendered with the consumer's
// business response (Answer.WithBusinessResponse) and given to SendResult
// unparsed puts the response on the message's Acknowledged outcome.
func TestEngineOutcomeCarriesBusinessResponse(t *testing.T) {
	s := newSide(t, "sender", engineConfig("s1"))
	r := newSide(t, "receiver", engineConfig("r1"))
	now := epoch
	ref, o, a := submitOne(t, now, s, r)
	require.NotNil(t, a.Await, "the answer waits for the consumer (R73)")
	a = a.WithBusinessResponse([]byte(`<q:Price xmlns:q="urn:q">12.5</q:Price>`))
	var got []byte
	s.onOutcome = func(o sender.Outcome) {
		if o.Ref == ref {
			got = o.Response
		}
	}
	s.e.SendResult(now, o.Ref, outbound.PostResult{Status: a.Status, ContentType: a.ContentType, Body: a.Body}, nil)
	s.drain(now)
	require.Equal(t, []string{"0 acknowledged"}, s.outcomes)
	require.Contains(t, string(got), ">12.5</q:Price>")
}
