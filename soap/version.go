package soap

import (
	"strconv"

	"github.com/wsrkit/wsrkit/faults"
)

// Namespace URIs this package reads and writes (digest §1).
const (
	// NamespaceSOAP11 is the SOAP 1.1 envelope namespace.
	NamespaceSOAP11 = "http://schemas.xmlsoap.org/soap/envelope/"
	// NamespaceSOAP12 is the SOAP 1.2 envelope namespace.
	NamespaceSOAP12 = "http://www.w3.org/2003/05/soap-envelope"
	// NamespaceWSRM is the WS-Reliability 1.1 header namespace.
	NamespaceWSRM = faults.Namespace
	// NamespaceRef is the namespace of ref:ServiceRefType; no element of it
	// appears on the wire.
	NamespaceRef = "http://docs.oasis-open.org/wsrm/2004/06/reference-1.1.xsd"
	// namespaceXML is bound to the prefix "xml" by definition.
	namespaceXML = "http://www.w3.org/XML/1998/namespace"
)

// Version is a SOAP version. The zero value is no version.
type Version uint8

const (
	// SOAP11 is SOAP 1.1.
	SOAP11 Version = iota + 1
	// SOAP12 is SOAP 1.2.
	SOAP12
)

// String returns "SOAP 1.1", "SOAP 1.2" or "Version(n)".
func (v Version) String() string {
	switch v {
	case SOAP11:
		return "SOAP 1.1"
	case SOAP12:
		return "SOAP 1.2"
	}
	return "Version(" + itoa(uint64(v)) + ")"
}

// Valid reports whether v is SOAP11 or SOAP12.
func (v Version) Valid() bool { return v == SOAP11 || v == SOAP12 }

// Namespace returns the envelope namespace URI of v.
func (v Version) Namespace() string {
	if v == SOAP12 {
		return NamespaceSOAP12
	}
	return NamespaceSOAP11
}

// prefix is the envelope prefix this package writes.
func (v Version) prefix() string {
	if v == SOAP12 {
		return "S12"
	}
	return "S11"
}

// mustUnderstand is the attribute value written for R03.
func (v Version) mustUnderstand() string {
	if v == SOAP12 {
		return "true"
	}
	return "1"
}

// versionOf maps an envelope namespace URI to its Version, or 0.
func versionOf(ns string) Version {
	switch ns {
	case NamespaceSOAP11:
		return SOAP11
	case NamespaceSOAP12:
		return SOAP12
	}
	return 0
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }
