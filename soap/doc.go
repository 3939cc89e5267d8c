// Package soap is wsrkit's wire layer: it reads SOAP 1.1 and 1.2 envelopes
// carrying WS-Reliability 1.1 header blocks into plain Go structs, and writes
// those header blocks, whole envelopes and SOAP Faults back as bytes.
//
// Reading builds a github.com/beevik/etree document — for the plain shape
// peers send, directly from the bytes (readFast, several times cheaper);
// for anything else, DOCTYPEs, carriage returns and malformed input
// included, with etree's own reader, which also words every error — and
// matches every element by namespace URI and local name, never by prefix; QName values are resolved through the
// in-scope namespace declarations (D4, R87). Problems in a received envelope
// come back as *faults.Fault with a stable Rule label; when the message could
// be identified (groupId, and number if any) the fault has ScopeMessage and
// carries GroupID/HasNumber/From/To so that the engine answers with a fault
// indication instead of a SOAP Fault (D7).
//
// Writing appends bytes to a caller-supplied buffer (Append* functions), in
// the schema's element order (R02), with mustUnderstand set (R03), UTC times
// with Z (D3), and fault codes passed through the caller's faults.Dialect
// (D6). Output is a pure function of the input, so resends are
// byte-identical (R10).
package soap
