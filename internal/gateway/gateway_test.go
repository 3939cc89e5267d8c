package gateway

import (
	"flag"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/sender"
)

func TestMessageIDRoundTrip(t *testing.T) {
	for _, ref := range []sender.MessageRef{
		{GroupID: "mid:1.abc@wsrkit", Number: 0},
		{GroupID: "mid:1.abc@wsrkit", Number: 18446744073709551615},
		{GroupID: "mid:x~y/z?@wsrkit", Singleton: true},
	} {
		id := MessageID(ref)
		require.NotContains(t, id, "/")
		got, err := ParseMessageID(id)
		require.NoError(t, err)
		require.Equal(t, ref, got)
	}
	for _, bad := range []string{"", "!!", "bm9wZQ", "MDF-Zw"} { // "nope", "01~g" (non-canonical number)
		_, err := ParseMessageID(bad)
		require.Error(t, err, bad)
	}
}

func TestParseBytes(t *testing.T) {
	cases := map[string]int64{"0": 0, "512": 512, "4MiB": 4 << 20, "1 GiB": 1 << 30, "16KiB": 16 << 10, "7B": 7}
	for in, want := range cases {
		got, err := ParseBytes(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "-1", "4MB", "x", "99999999999GiB"} {
		_, err := ParseBytes(bad)
		require.Error(t, err, bad)
	}
	require.Equal(t, "4MiB", FormatBytes(4<<20))
	require.Equal(t, "1000", FormatBytes(1000))
}

func TestFlagsDefaultsAndValidate(t *testing.T) {
	c := DefaultConfig()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c.RegisterFlags(fs)
	require.NoError(t, fs.Parse([]string{"-max-body", "1MiB", "-fake-clock-start", "2030-01-01T00:00:00.5Z", "-strict-faults"}))
	require.Equal(t, int64(1<<20), c.MaxBody)
	require.Equal(t, time.Date(2030, 1, 1, 0, 0, 0, 5e8, time.UTC), c.FakeClockStart)
	require.True(t, c.StrictFaults)
	require.Equal(t, faults.Strict11, engineConfig(&c, "i").Receiver.Dialect, "-strict-faults is the engine's dialect")
	require.Equal(t, faults.Extended, engineConfig(&Config{}, "i").Receiver.Dialect)
	require.Equal(t, "127.0.0.1:8080", c.Listen)
	require.Equal(t, "./wsrkit-data", c.DataDir)
	require.Equal(t, 5*time.Second, c.RetryInterval)
	require.NoError(t, c.Validate())
	require.Error(t, fs.Parse([]string{"-fake-clock-start", "yesterday"}))

	c.MaxHeldTotal = 0
	c.RetryBackoff = 0.5
	c.RetryInterval, c.RetryMaxInterval = time.Hour, time.Minute // D26: the cap is not below the interval
	err := c.Validate()
	require.ErrorContains(t, err, "-max-held-total must be positive")
	require.ErrorContains(t, err, "-retry-backoff must be at least 1")
	require.ErrorContains(t, err, "-retry-max-interval (1m0s) must not be below -retry-interval (1h0m0s)")
}

// Issue 18 item 5: the submitted body goes through the parser and limits
// of /rmp, in the envelope it will travel in, and is zero or more
// elements: nothing that would close the Body or the Envelope passes.
func TestSubmitBodyIsParsed(t *testing.T) {
	g := &Gateway{cfg: DefaultConfig()}
	to := "http://peer/rmp"
	check := func(body, version string) *fieldError {
		_, ferr := g.submission(&SubmitRequest{To: &to, Body: &body, SOAP: version}, time.Now())
		return ferr
	}
	for _, ok := range []string{``, ` `, `<a><b/></a> <c x="1">t</c>`, `<!-- c --><p:a xmlns:p="urn:p"><p:b/></p:a>`,
		strings.Repeat("<a>", 62) + strings.Repeat("</a>", 62), strings.Repeat("<y/>", 9998)} {
		for _, v := range []string{"1.1", "1.2"} {
			require.Nil(t, check(ok, v), "%.60s", ok)
		}
	}
	for _, bad := range []string{
		`<a></b>`, `</S11:Body><S11:Body>`, `</S11:Envelope><S11:Envelope>`, `</S12:Body><S12:Body>`,
		`</S12:Envelope><S12:Envelope>`, `</S11:Body></S11:Envelope><S11:Envelope xmlns:S11="http://schemas.xmlsoap.org/soap/envelope/"><S11:Body>`,
		`</S12:Body></S12:Envelope><S12:Envelope xmlns:S12="http://www.w3.org/2003/05/soap-envelope"><S12:Body>`,
		`<a>`, `</a>`, `<!DOCTYPE a><a/>`, `<?pi x?>`, `text`, `<a/>text`, `<x:y/>`, `<a b="1" b="2"/>`,
		strings.Repeat("<a>", 63) + strings.Repeat("</a>", 63), strings.Repeat("<y/>", 9999),
	} {
		for _, v := range []string{"1.1", "1.2"} {
			ferr := check(bad, v)
			require.NotNil(t, ferr, "SOAP %s accepted %.60q", v, bad)
			require.Equal(t, "body", ferr.field)
		}
	}
}

func TestSubmissionMapping(t *testing.T) {
	g := &Gateway{cfg: DefaultConfig()}
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	to, body := "http://peer/rmp", "<x/>"
	s, ferr := g.submission(&SubmitRequest{To: &to, Body: &body, Group: "k", Ordered: true, Ack: true, DupElim: true,
		ExpiresIn: "60s", GroupMaxIdle: "PT10M", ReplyPattern: "Poll", SOAP: "1.2"}, now)
	require.Nil(t, ferr)
	require.Equal(t, now.Add(time.Minute), s.Expiry)
	require.True(t, s.Flags.MessageOrder && s.Flags.AckRequested && s.Flags.DuplicateElimination)
	require.True(t, s.Timing.HasMaxIdle)
	require.Equal(t, 10*time.Minute, s.Timing.MaxIdle.Clock)
	require.Equal(t, "Poll", s.Pattern.String())
	require.EqualValues(t, 2, s.Version)

	_, ferr = g.submission(&SubmitRequest{To: &to, Body: &body, GroupMaxIdle: "10m"}, now)
	require.Equal(t, "groupMaxIdle", ferr.field, "group timing needs a group")
	_, ferr = g.submission(&SubmitRequest{To: &to, Body: &body, Group: "k", ExpiresIn: "2h", GroupExpiryTime: "2030-01-01T01:00:00Z"}, now)
	require.Equal(t, "expiresIn", ferr.field, "expires after the group (D10)")
	_, ferr = g.submission(&SubmitRequest{To: &to, Body: &body, ExpiresIn: "1s", ExpiryTime: "2030-01-01T01:00:00Z"}, now)
	require.Equal(t, "expiryTime", ferr.field)
	bad := "ftp://x"
	_, ferr = g.submission(&SubmitRequest{To: &bad, Body: &body}, now)
	require.Equal(t, "to", ferr.field)
}

func TestReasonStrings(t *testing.T) {
	require.Equal(t, "", ReasonString(sender.ReasonNone))
	require.Equal(t, "expired", ReasonString(sender.ReasonExpired))
	require.Equal(t, "retries-exhausted", ReasonString(sender.ReasonRetriesExhausted))
	require.Equal(t, "fault", ReasonString(sender.ReasonFaultReceived))
	require.Equal(t, "group-aborted", ReasonString(sender.ReasonGroupAborted))
}

// TestRecordsSurviveReopenAndStayBounded: records are durable, the last
// outcome of a message wins (D12, D13), the oldest go past the bound, and
// a torn last line is skipped.
func TestRecordsSurviveReopenAndStayBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.jsonl")
	r, err := openRecords(path, 2)
	require.NoError(t, err)
	require.NoError(t, r.put(Record{ID: "a", Outcome: "acknowledged"}))
	require.NoError(t, r.put(Record{ID: "a", Outcome: "failed", Reason: "fault", Fault: "MessageExpired"}))
	require.NoError(t, r.put(Record{ID: "b", Outcome: "acknowledged"}))
	require.NoError(t, r.put(Record{ID: "c", Outcome: "acknowledged"}))
	for i := range 5 { // forces a compaction
		require.NoError(t, r.put(Record{ID: "c", Outcome: "acknowledged", Reason: strings.Repeat("x", i)}))
	}
	require.NoError(t, r.close())

	r, err = openRecords(path, 2)
	require.NoError(t, err)
	_, ok := r.get("a")
	require.False(t, ok, "evicted past the bound")
	b, ok := r.get("b")
	require.True(t, ok)
	require.Equal(t, "acknowledged", b.Outcome)
	require.NoError(t, r.close())

	r, err = openRecords(path, 5)
	require.NoError(t, err)
	require.NoError(t, r.put(Record{ID: "a", Outcome: "failed", Reason: "fault", Fault: "MessageExpired"}))
	r.file.f.WriteString(`{"id":"torn","outc`)
	require.NoError(t, r.close())
	r, err = openRecords(path, 5)
	require.NoError(t, err)
	a, ok := r.get("a")
	require.True(t, ok)
	require.Equal(t, "MessageExpired", a.Fault)
	_, ok = r.get("torn")
	require.False(t, ok)
	require.NoError(t, r.close())
}

// TestEngineConfigPendingBounds: -max-pending and -max-pending-bytes are
// the submit bounds whatever their size; the sender's per-destination
// defaults (100000 messages, 1 GiB) do not cap them silently.
func TestEngineConfigPendingBounds(t *testing.T) {
	c := DefaultConfig()
	c.MaxPending, c.MaxPendingBytes = 250000, 3<<30
	lim := engineConfig(&c, "inst").Sender.Limits
	require.Equal(t, 250000, lim.MaxPending)
	require.Equal(t, 250000, lim.MaxPendingPerDest)
	require.Equal(t, int64(3<<30), lim.MaxPendingBytes)
	require.Equal(t, int64(3<<30), lim.MaxPendingBytesPerDest)
}

// TestEngineConfigLateFaults (#23): the late-fault flags reach the sending
// RMP: -peer-ack-on-delivery marks each named destination (repeatable,
// comma-separated), -late-fault-polls=false turns the polling off.
func TestEngineConfigLateFaults(t *testing.T) {
	c := DefaultConfig()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	c.RegisterFlags(fs)
	require.NoError(t, fs.Parse([]string{"-peer-ack-on-delivery", "http://a.example/rmp, http://b.example/rmp",
		"-peer-ack-on-delivery", "https://c.example/rmp", "-late-fault-margin", "1m", "-poll-interval-max", "3m"}))
	require.NoError(t, c.Validate())
	sc := engineConfig(&c, "inst").Sender
	require.False(t, sc.NoLateFaultPolls)
	require.Equal(t, time.Minute, sc.LateFaultMargin)
	require.Equal(t, 3*time.Minute, sc.PollIntervalMax)
	require.Len(t, sc.Destinations, 3)
	for _, u := range []string{"http://a.example/rmp", "http://b.example/rmp", "https://c.example/rmp"} {
		require.True(t, sc.Destinations[u].AckOnDelivery, u)
	}
	c.LateFaultPolls = false
	require.True(t, engineConfig(&c, "inst").Sender.NoLateFaultPolls)
	_, err := sender.New(engineConfig(&c, "inst").Sender)
	require.NoError(t, err, "a destination without a retry policy takes the default one")
}

// TestEngineConfigDeliveryRun: -delivery-run reaches the receiving RMP,
// 1 by default, so that a crash hands a plain SOAP service behind -deliver
// or -route at most the one message whose hand-off it lost (R92), as
// before #22; out-of-range values are refused.
func TestEngineConfigDeliveryRun(t *testing.T) {
	c := DefaultConfig()
	require.Equal(t, 1, engineConfig(&c, "inst").Receiver.MaxDeliveryRun)
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	c.RegisterFlags(fs)
	require.NoError(t, fs.Parse([]string{"-delivery-run", "16"}))
	require.NoError(t, c.Validate())
	require.Equal(t, 16, engineConfig(&c, "inst").Receiver.MaxDeliveryRun)
	for _, bad := range []int{0, -1, maxDeliveryRun + 1} {
		c.DeliveryRun = bad
		require.ErrorContains(t, c.Validate(), "-delivery-run must be from 1 to 1000", "%d", bad)
	}
}
