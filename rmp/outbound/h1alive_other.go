//go:build !unix

package outbound

// alive reports whether a pooled connection can carry the next exchange;
// without a way to look at the socket unasked, a connection the server
// closed is found out by the exchange, which is then sent again on a new
// one when nothing of it was written (h1.do).
func (c *h1Conn) alive() bool { return c.br.Buffered() == 0 }
