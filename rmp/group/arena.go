package group

// An Arena carves the values of Mutations from larger chunks, so that the
// records of a Ready cost a few allocations instead of one each, and the
// driver can keep them without a copy (#22). It only appends: bytes it
// handed out are never written again, so a value stays valid for as long
// as anyone holds it (it keeps its chunk alive). Chunks are never reused.
//
// Use: b := a.Buf(n); append the record to b; v := a.Keep(b).
type Arena struct {
	// free is the unused tail of the current chunk (len 0).
	free []byte
}

// arenaChunk is the size of a fresh chunk: a size class of the Go
// allocator, holding several records of a ≈1.5 KB message.
const arenaChunk = 16 << 10

// Buf returns an empty slice to append one value of about n bytes to,
// in the current chunk when it has room for n, else in a new one. A value
// that outgrows n is still correct (append moves it), only not carved.
func (a *Arena) Buf(n int) []byte {
	if cap(a.free) < n {
		a.free = make([]byte, 0, max(arenaChunk, n))
	}
	return a.free
}

// Keep takes v, the slice Buf returned with one value appended, as handed
// out and returns it with its capacity cut to its length, so that no
// append to it can reach the bytes after it. The next Buf starts after it.
func (a *Arena) Keep(v []byte) []byte {
	a.free = v[len(v):]
	return v[:len(v):len(v)]
}

// Copy returns a copy of b carved from the arena; nil for nil.
func (a *Arena) Copy(b []byte) []byte {
	if b == nil {
		return nil
	}
	return a.Keep(append(a.Buf(len(b)), b...))
}
