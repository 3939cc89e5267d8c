package rmp

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/rmp/httpbody"
	"github.com/wsrkit/wsrkit/soap"
)

// ReadRequest reads and parses a POST to the RMP endpoint (or a SOAP
// request to a route): its body as httpbody.Read reads it, with the
// envelope's element, depth and attribute limits of opts checked while
// the bytes arrive (soap.Scanner), once they pass scanAfter (a shorter
// envelope is checked by its parse alone). A body past one of them is read no
// further: the Inbound carries Parse's fault for it (soap.limit.*), and
// the connection is closed once the request is answered (Connection:
// close; under HTTP/2 the stream is reset), without reading the rest — a
// parse bomb costs its first ~40 KB, not its whole read and buffer (issue
// 18). err is httpbody.Read's refusal (413, 415, 503…), to answer with
// httpbody.WriteError; the Inbound is nil then.
//
// The Body, nil for a refused one, holds its bytes of the Limits' budget:
// Node.ServeInbound releases it as soon as its engine has taken the
// request, so a request that waits for its answer (a commit, a business
// response) holds none; a caller that does not serve the Inbound there
// releases it itself.
func ReadRequest(w http.ResponseWriter, r *http.Request, lim httpbody.Limits, opts soap.ParseOptions) (*Inbound, *httpbody.Body, error) {
	// "Soapaction", canonical: Header.Get copies a name it canonicalizes.
	in, charset := inboundHead(r.Header.Get("Content-Type"), r.Header.Get("Soapaction"))
	wire := &in.wire // in the Inbound: one allocation fewer (#22)
	wire.ReadCloser = r.Body
	if in.ctErr == nil {
		in.scan = *soap.NewScanner(opts, charset) // in the Inbound too
		lim.Scan, lim.ScanAfter = &in.scan, scanAfter
		r.Body = wire
	}
	body, err := httpbody.Read(w, r, lim)
	if err != nil {
		// Declared here: errors.As's target escapes to the heap.
		var limit *faults.Fault
		if !errors.As(err, &limit) {
			return nil, nil, err
		}
		in.parseErr = limit
		closeUnread(w, r, wire.eof)
		return in, nil, nil
	}
	if in.ctErr == nil {
		in.parse(body.Bytes, charset, opts)
	}
	in.body = body
	return in, body, nil
}

// scanAfter is how much of a body ReadRequest reads before it checks the
// envelope's limits as the bytes arrive: an envelope that ends before is
// checked by its parse alone, which refuses what the Scanner would (a
// body is then walked once, not twice, #22), and a parse bomb still costs
// its first ~40 KB at most.
const scanAfter = 16 << 10

// releaseBody gives the request's body back to its budget.
func (in *Inbound) releaseBody() { in.body.Release() }

// closeUnread makes the server close the connection once the request is
// answered, without reading the rest of its body. Under HTTP/2 the
// stream alone ends (the server resets a stream whose handler returned
// before its body did), and the connection's other streams go on.
func closeUnread(w http.ResponseWriter, r *http.Request, allRead bool) {
	if r.ProtoMajor >= 2 {
		return
	}
	w.Header().Set("Connection", "close")
	// A MaxBytesReader read past its limit tells net/http's ResponseWriter
	// that the body was refused: the server then shuts its side down and
	// lingers before closing, so that the client reads the answer rather
	// than a reset (RFC 9112 §9.6).
	http.MaxBytesReader(w, io.NopCloser(strings.NewReader("x")), 0).Read(make([]byte, 1))
	// The server reads what is left of a body before closing (up to
	// 256 KiB): not at all, however slowly the client sends it (a
	// deadline in the past fails every read at once). Not when all of it
	// is in (a compressed body decoding past a limit): the server then
	// reads the connection to see the client leave, and would take the
	// failed read for that.
	if !allRead {
		http.NewResponseController(w).SetReadDeadline(time.Unix(1, 0))
	}
}

// eofReader tells whether a request body was read to its end.
type eofReader struct {
	io.ReadCloser
	eof bool
}

func (e *eofReader) Read(p []byte) (int, error) {
	n, err := e.ReadCloser.Read(p)
	if err == io.EOF {
		e.eof = true
	}
	return n, err
}
