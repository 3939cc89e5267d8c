package faults

import (
	"strconv"
	"strings"
)

// Namespace is the WS-Reliability 1.1 header namespace; every fault QName is in it (D5).
const Namespace = "http://docs.oasis-open.org/wsrm/2004/06/ws-reliability-1.1.xsd"

// Code is one of the twelve fault codes of D5. The zero value is no code.
//
// Code implements error, so errors.Is(err, faults.MessageExpired) is true for
// a *Fault carrying that code.
type Code uint8

// The ten codes of the 1.1 schema (digest §7), then the two of the Rel 50/57
// resolutions (D5).
const (
	InvalidRequest Code = iota + 1
	InvalidPollRequest
	InvalidMessageId
	InvalidMessageParameters
	InvalidExpiryTime
	InvalidReplyPattern
	FeatureNotSupported
	PermanentProcessingFailure
	MessageProcessingFailure
	GroupAborted
	MessageExpired
	MessageStoreOverflow

	numCodes = int(MessageStoreOverflow)
)

var names = [...]string{
	InvalidRequest:             "InvalidRequest",
	InvalidPollRequest:         "InvalidPollRequest",
	InvalidMessageId:           "InvalidMessageId",
	InvalidMessageParameters:   "InvalidMessageParameters",
	InvalidExpiryTime:          "InvalidExpiryTime",
	InvalidReplyPattern:        "InvalidReplyPattern",
	FeatureNotSupported:        "FeatureNotSupported",
	PermanentProcessingFailure: "PermanentProcessingFailure",
	MessageProcessingFailure:   "MessageProcessingFailure",
	GroupAborted:               "GroupAborted",
	MessageExpired:             "MessageExpired",
	MessageStoreOverflow:       "MessageStoreOverflow",
}

// All returns the twelve codes in their declaration order.
func All() []Code {
	out := make([]Code, 0, numCodes)
	for c := Code(1); int(c) <= numCodes; c++ {
		out = append(out, c)
	}
	return out
}

// Valid reports whether c is one of the twelve codes.
func (c Code) Valid() bool { return c >= 1 && int(c) <= numCodes }

// String returns the local name of the code (e.g. "MessageExpired"), or
// "Code(n)" for an invalid value.
func (c Code) String() string {
	if !c.Valid() {
		return "Code(" + strconv.Itoa(int(c)) + ")"
	}
	return names[c]
}

// Error makes a Code usable as an errors.Is target.
func (c Code) Error() string { return "wsrm:" + c.String() }

// QName returns the code as a QName string with the given prefix, which the
// caller must bind to Namespace (D4).
func (c Code) QName(prefix string) string {
	if prefix == "" {
		return c.String()
	}
	return prefix + ":" + c.String()
}

// Parse maps a local name to its code. It accepts all twelve codes in either
// dialect (D6: on input all twelve are accepted).
func Parse(local string) (Code, bool) {
	local = strings.TrimSpace(local)
	for c := Code(1); int(c) <= numCodes; c++ {
		if names[c] == local {
			return c, true
		}
	}
	return 0, false
}

// InSchema reports whether the code is in the 1.1 schema's FaultCodeEnum
// (digest §7); MessageExpired and MessageStoreOverflow are not (D5).
func (c Code) InSchema() bool { return c.Valid() && c <= GroupAborted }

// Class is a fault's class in digest §7: a format problem of the request, or a
// processing problem of the receiving RMP.
type Class uint8

const (
	// Format faults are the sender's fault: SOAP 1.1 Client, SOAP 1.2 Sender.
	Format Class = iota + 1
	// Processing faults are the receiver's: SOAP 1.1 Server, SOAP 1.2 Receiver.
	Processing
)

func (k Class) String() string {
	switch k {
	case Format:
		return "format"
	case Processing:
		return "processing"
	}
	return "Class(" + strconv.Itoa(int(k)) + ")"
}

// Class returns the code's class (digest §7). MessageExpired and
// MessageStoreOverflow are processing faults, like the schema codes D6 maps
// them onto.
func (c Code) Class() Class {
	if c >= InvalidRequest && c <= InvalidReplyPattern {
		return Format
	}
	return Processing
}

// Retryable reports whether a sending RMP keeps resending a message that got
// this fault until its ExpiryTime (D15, R26): MessageProcessingFailure and
// MessageStoreOverflow. Every other code ends the message (R27, R28).
func (c Code) Retryable() bool {
	return c == MessageProcessingFailure || c == MessageStoreOverflow
}

// SOAP11FaultCode returns the local name of the SOAP 1.1 faultcode for a SOAP
// Fault carrying c: "Client" for format faults, "Server" otherwise (digest
// §7, ambiguity A4).
func (c Code) SOAP11FaultCode() string {
	if c.Class() == Format {
		return "Client"
	}
	return "Server"
}

// SOAP12Code returns the local name of the SOAP 1.2 Code/Value for a SOAP
// Fault carrying c ("Sender" or "Receiver"); the Subcode is c's QName.
func (c Code) SOAP12Code() string {
	if c.Class() == Format {
		return "Sender"
	}
	return "Receiver"
}

// HTTPStatus returns the HTTP status of a SOAP Fault carrying c (digest §9,
// R86): 500 under SOAP 1.1; under SOAP 1.2, 400 for Sender and 500 for
// Receiver. A fault indication inside wsrm:Response is not a SOAP Fault and
// travels with 200.
func (c Code) HTTPStatus(soap12 bool) int {
	if soap12 && c.Class() == Format {
		return 400
	}
	return 500
}
