// Package archtest holds tests that enforce wsrkit's architecture: the
// direction of imports between its packages and the absence of wall-clock
// reads in the pure state machines (see shared/design/STYLE.md).
package archtest
