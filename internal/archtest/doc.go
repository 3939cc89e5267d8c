// Package archtest holds tests that enforce wsrkit's architecture: the
// direction of imports between its packages (one rule per package, in the
// table of imports_test.go, layered pure core → soap → store → rmp →
// drivers → gateway → cmd), the absence of wall-clock reads in the pure
// state machines (see shared/design/STYLE.md), and that every D-, R- and
// A-id the code cites is explained in docs/requirements.md
// (citations_test.go), and that rmp's exported surface stays within its
// budget with no exported mutable variable anywhere (surface_test.go).
package archtest
