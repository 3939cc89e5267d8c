package gateway

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"strconv"

	"golang.org/x/net/netutil"
)

// Server is a Gateway listening on a TCP address.
type Server struct {
	*Gateway
	ln   net.Listener
	http *http.Server
	done chan error
}

// Start listens on cfg.Listen (port 0 picks a free one), resolves an empty
// PublicURL to http://<bound address>, opens the gateway and serves it.
func Start(cfg Config, opts Options) (*Server, error) {
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, err
	}
	if cfg.PublicURL == "" {
		cfg.PublicURL = "http://" + ln.Addr().String()
	}
	if cfg.AdvertiseURL == "" {
		cfg.AdvertiseURL = "http://" + advertiseAddr(ln.Addr().(*net.TCPAddr))
	}
	g, err := Open(cfg, opts)
	if err != nil {
		ln.Close()
		return nil, err
	}
	s := &Server{Gateway: g, ln: ln, done: make(chan error, 1), http: &http.Server{
		Handler:           g.Handler(),
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		ReadTimeout:       cfg.ReadTimeout,
		WriteTimeout:      cfg.WriteTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		MaxHeaderBytes:    int(min(cfg.MaxHeaderBytes, 1<<30)),
	}}
	// Beyond -max-conns new connections wait in the kernel's backlog
	// until one closes: the timeouts above bound how long that is.
	go func() { s.done <- s.http.Serve(netutil.LimitListener(ln, cfg.MaxConns)) }()
	return s, nil
}

// advertiseAddr is the bound address as others can dial it: the host name
// in place of an unspecified IP (-listen :8081).
func advertiseAddr(a *net.TCPAddr) string {
	if a.IP.IsUnspecified() {
		if h, err := os.Hostname(); err == nil && h != "" {
			return net.JoinHostPort(h, strconv.Itoa(a.Port))
		}
	}
	return a.String()
}

// URL is the base URL of the server's listener.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Done reports the end of serving: nil after Shutdown, else the error.
func (s *Server) Done() <-chan error { return s.done }

// Shutdown stops taking requests, waits for those in progress, then closes
// the gateway, all within ctx.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.http.Shutdown(ctx)
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return errors.Join(err, s.Gateway.Close(ctx))
}

// Kill drops every connection and the store at once, as a crash would
// (tests).
func (s *Server) Kill() {
	s.http.Close()
	s.Gateway.Kill()
}
