package group

// Bits is a set of one-bit flags packed in a byte, what the sending and
// the receiving group states keep their yes/no fields in to stay in their
// size classes (memory per idle open group, BENCHMARKS.md).
type Bits uint8

// Has reports whether every flag of m is set.
func (b Bits) Has(m Bits) bool { return b&m == m }

// Set sets the flags of m when on and clears them otherwise.
func (b *Bits) Set(m Bits, on bool) {
	if on {
		*b |= m
	} else {
		*b &^= m
	}
}
