//go:build !invariants

package group

// invariants is false without the invariants build tag; build with
// -tags invariants to re-check SeqSet normalisation after every mutation.
const invariants = false
