//go:build unix

package outbound

import (
	"syscall"
)

// alive reports whether a pooled connection can carry the next exchange:
// the server has neither closed it nor sent anything since the last
// answer. net/http's Transport learns so from the read its goroutine
// keeps on every idle connection; h1 keeps none, so it looks once, without
// waiting, before it writes (one recv with MSG_PEEK|MSG_DONTWAIT).
func (c *h1Conn) alive() bool {
	if c.br.Buffered() > 0 {
		return false
	}
	sc, ok := c.nc.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	open := false
	err = rc.Read(func(fd uintptr) bool {
		var b [1]byte
		_, _, rerr := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		open = rerr == syscall.EAGAIN || rerr == syscall.EWOULDBLOCK
		return true // never wait for readiness
	})
	return err == nil && open
}
