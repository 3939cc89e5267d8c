package faults

import "strconv"

// Dialect selects which codes an RMP emits (D6). On input every dialect
// accepts all twelve codes.
type Dialect uint8

const (
	// Extended, the default, emits all twelve codes of D5.
	Extended Dialect = iota
	// Strict11 maps the two codes outside the 1.1 schema onto schema codes so
	// that every emitted header validates against ws-reliability-1.1.xsd:
	// MessageExpired → PermanentProcessingFailure and
	// MessageStoreOverflow → MessageProcessingFailure (D6).
	Strict11
)

func (d Dialect) String() string {
	switch d {
	case Extended:
		return "extended"
	case Strict11:
		return "strict-1.1"
	}
	return "Dialect(" + strconv.Itoa(int(d)) + ")"
}

// Wire returns the code to put on the wire for c under dialect d.
func (d Dialect) Wire(c Code) Code {
	if d != Strict11 {
		return c
	}
	switch c {
	case MessageExpired:
		return PermanentProcessingFailure
	case MessageStoreOverflow:
		return MessageProcessingFailure
	}
	return c
}
