//go:build invariants

package group

// invariants is true under the invariants build tag: every SeqSet mutation
// re-checks the set's normalisation and panics when it is broken.
const invariants = true
