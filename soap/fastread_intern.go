package soap

// Names and white space that envelopes repeat, kept as one string each so
// that readFast does not allocate them per message.

import "strings"

// internTable maps each interned string to itself; it is only read after
// init, so readers need no lock.
var internTable = func() map[string]string {
	m := map[string]string{}
	add := func(ss ...string) {
		for _, s := range ss {
			m[s] = s
		}
	}
	// SOAP and WS-Reliability element and attribute names, the prefixes
	// this package and common stacks write.
	add("Envelope", "Header", "Body", "Fault", "faultcode", "faultstring", "faultactor", "detail",
		"Code", "Value", "Subcode", "Reason", "Text", "Node", "Role", "Detail", "lang",
		"mustUnderstand", "actor", "role", "encodingStyle", "relay",
		"Request", "Response", "PollRequest", "MessageId", "groupId", "SequenceNum", "number", "last",
		"groupExpiryTime", "groupMaxIdleDuration", "ExpiryTime", "ReplyPattern", "ReplyTo", "BareURI",
		"reference-scheme", "AckRequested", "DuplicateElimination", "MessageOrder",
		"NonSequenceReply", "SequenceReplies", "ReplyRange", "from", "to", "fault",
		"RefToMessageIds", "SequenceNumRange",
		"To", "Action", "MessageID", "RelatesTo", "From", "FaultTo", "Address",
		"xmlns", "xml", "S", "S11", "S12", "s", "soap", "soap12", "soapenv", "env", "SOAP-ENV", "SOAP_ENV",
		"wsrm", "wsa", "wsse", "wsu", "xsi", "xsd")
	// Attribute values every envelope repeats: the namespaces' URIs
	// (xmlns declarations) and mustUnderstand's and relay's values
	// (internValue).
	add(NamespaceSOAP11, NamespaceSOAP12, NamespaceWSRM, NamespaceRef, namespaceXML,
		"0", "1", "true", "false")
	// Indentation: a line end and up to 32 spaces or 8 tabs, and the
	// same without the line end.
	for n := 0; n <= 32; n++ {
		add("\n"+strings.Repeat(" ", n), strings.Repeat(" ", n))
	}
	for n := 1; n <= 8; n++ {
		add("\n"+strings.Repeat("\t", n), strings.Repeat("\t", n))
	}
	return m
}()

// intern returns b as a string, without allocating when it is in
// internTable.
func intern(b []byte) string {
	if s, ok := internTable[string(b)]; ok {
		return s
	}
	return string(b)
}

// internSpace is intern for text: only short runs are looked up.
func internSpace(b []byte) string {
	if len(b) <= 33 {
		return intern(b)
	}
	return string(b)
}

// internValue is intern for attribute values: only the short ones and
// those that may be a namespace URI are looked up, so that the values
// that differ per message (groupId, numbers) cost no lookup.
func internValue(b []byte) string {
	if len(b) <= len("false") || len(b) > len("http://") && string(b[:len("http://")]) == "http://" {
		return intern(b)
	}
	return string(b)
}
