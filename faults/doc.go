// Package faults is the vocabulary of WS-Reliability fault codes: the twelve
// codes of DECISIONS D5, their QNames, their SOAP 1.1 and 1.2 mappings, the
// emitting dialect of D6, and a Fault error type that carries a stable rule
// label naming the check that fired.
//
// It imports only the standard library and sits at the bottom of wsrkit's
// import graph, next to rmp/group.
package faults
