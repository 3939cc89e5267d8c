// Package group is the vocabulary of WS-Reliability groups and the pure data
// types the other wsrkit packages speak: sequence numbers and their interval
// sets, the ordering buffer of an ordered group, the group lifecycle
// (termination t1–t4 and state removal, DECISIONS D20–D24) as functions of
// the time passed in, and the keys and mutations by which state machines ask
// a store to persist their state.
//
// It imports only the standard library and never reads a clock: every
// instant comes in as an argument.
package group
