package gateway

import (
	"context"
	"crypto/tls"
	"errors"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/netutil"
)

// tlsPollInterval is how often the certificate, key and CA files are
// checked for a change (size or mtime), besides SIGHUP.
const tlsPollInterval = time.Second

// Server is a Gateway listening on a TCP address (and, with -admin-listen,
// on a second one for the admin API).
type Server struct {
	*Gateway
	ln, adminLn     net.Listener
	http, adminHTTP *http.Server
	tls             *serverTLS // nil without -tls-cert
	scheme          string     // http or https
	done            chan error
	stopWatch       chan struct{}
	stopOnce        sync.Once
	log             *slog.Logger
}

// Start listens on cfg.Listen (port 0 picks a free one), resolves an empty
// PublicURL to http(s)://<bound address>, opens the gateway and serves it;
// with -tls-cert over TLS, with -admin-listen the admin API apart.
func Start(cfg Config, opts Options) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Server{scheme: "http", done: make(chan error, 2), stopWatch: make(chan struct{}), log: opts.Logger}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if cfg.TLSCert != "" {
		var err error
		if s.tls, err = newServerTLS(&cfg); err != nil {
			return nil, err
		}
		s.scheme = "https"
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, err
	}
	s.ln = ln
	if cfg.AdminListen != "" {
		if s.adminLn, err = net.Listen("tcp", cfg.AdminListen); err != nil {
			ln.Close()
			return nil, err
		}
	}
	if cfg.PublicURL == "" {
		cfg.PublicURL = s.scheme + "://" + ln.Addr().String()
	}
	if cfg.AdvertiseURL == "" {
		cfg.AdvertiseURL = s.scheme + "://" + advertiseAddr(ln.Addr().(*net.TCPAddr))
	}
	g, err := Open(cfg, opts)
	if err != nil {
		s.closeListeners()
		return nil, err
	}
	s.Gateway = g
	s.http = s.httpServer(g.PublicHandler())
	// Beyond -max-conns new connections wait in the kernel's backlog
	// until one closes: the timeouts above bound how long that is.
	go func() { s.done <- s.http.Serve(s.wrap(ln, false)) }()
	if s.adminLn != nil {
		s.adminHTTP = s.httpServer(g.AdminHandler())
		go func() { s.done <- s.adminHTTP.Serve(s.wrap(s.adminLn, true)) }()
	}
	if s.reloadable() {
		go s.watch()
	}
	return s, nil
}

func (s *Server) httpServer(h http.Handler) *http.Server {
	cfg := &s.cfg
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		ReadTimeout:       cfg.ReadTimeout,
		WriteTimeout:      cfg.WriteTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		MaxHeaderBytes:    int(min(cfg.MaxHeaderBytes, 1<<30)),
		ErrorLog:          serverErrorLog(s.log),
	}
}

// wrap bounds a listener by -max-conns and puts TLS on it (the handshake
// happens on the connection's own goroutine, within the header timeout).
// The admin listener asks for no client certificate: partners' CA need not
// sign operators, whom the admin token authenticates.
func (s *Server) wrap(ln net.Listener, admin bool) net.Listener {
	ln = netutil.LimitListener(ln, s.cfg.MaxConns)
	switch {
	case s.tls == nil:
	case admin:
		ln = tls.NewListener(ln, s.tls.admin)
	default:
		ln = tls.NewListener(ln, s.tls.base)
	}
	return ln
}

func (s *Server) closeListeners() {
	s.ln.Close()
	if s.adminLn != nil {
		s.adminLn.Close()
	}
}

// watch reloads the certificates when their files change, until Shutdown.
func (s *Server) watch() {
	every(tlsPollInterval, s.stopWatch, func() bool {
		if s.filesChanged() {
			s.ReloadAndLog("files changed")
		}
		return true
	})
}

func (s *Server) filesChanged() bool {
	return (s.tls != nil && s.tls.changed()) || (s.peerTLS.cert != nil && s.peerTLS.cert.changed())
}

// Reload re-reads the certificates, keys, client CAs and the admin token
// (SIGHUP). Established connections keep the certificate they shook hands
// with; new handshakes get the new one. On an error the old material stays
// in force.
func (s *Server) Reload() error {
	var err error
	if s.tls != nil {
		err = s.tls.reload()
	}
	return errors.Join(err, s.Gateway.Reload())
}

// reloadable reports whether any file is re-read by Reload.
func (s *Server) reloadable() bool {
	return s.tls != nil || s.peerTLS.cert != nil || s.token != nil || s.auth.enabled() || s.peerAllow != nil
}

// ReloadAndLog is Reload with its outcome logged (SIGHUP, file changes).
func (s *Server) ReloadAndLog(why string) {
	if !s.reloadable() {
		s.log.Info("nothing to reload: no -tls-cert, -peer-cert, -admin-token-file, -cluster-secret-file or -peer-allow", "why", why)
		return
	}
	if err := s.Reload(); err != nil {
		s.log.Warn("TLS/token/-peer-allow reload failed; the previous ones stay in use", "why", why, "err", err)
		return
	}
	s.log.Info("TLS certificates, admin token and -peer-allow reloaded", "why", why)
}

// serverErrorLog sends net/http's own lines to the log: failed TLS
// handshakes (scanners, partners with a wrong certificate) at debug, the
// rest at warn.
func serverErrorLog(l *slog.Logger) *log.Logger {
	return log.New(logWriter(func(p []byte) {
		line := strings.TrimSpace(string(p))
		level := slog.LevelWarn
		if strings.Contains(line, "TLS handshake error") {
			level = slog.LevelDebug
		}
		l.Log(context.Background(), level, "http server: "+line)
	}), "", 0)
}

type logWriter func([]byte)

func (f logWriter) Write(p []byte) (int, error) { f(p); return len(p), nil }

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

// URL is the base URL of the server's listener (https with -tls-cert).
func (s *Server) URL() string { return s.scheme + "://" + s.ln.Addr().String() }

// AdminURL is the base URL of the -admin-listen listener (plain HTTP or
// HTTPS like the main one); "" without -admin-listen.
func (s *Server) AdminURL() string {
	if s.adminLn == nil {
		return ""
	}
	return s.scheme + "://" + s.adminLn.Addr().String()
}

// Done reports the end of serving: nil after Shutdown, else the error.
func (s *Server) Done() <-chan error { return s.done }

func (s *Server) stopWatching() { s.stopOnce.Do(func() { close(s.stopWatch) }) }

// Shutdown stops taking requests, waits for those in progress, then closes
// the gateway, all within ctx.
func (s *Server) Shutdown(ctx context.Context) error {
	s.stopWatching()
	err := s.http.Shutdown(ctx)
	if s.adminHTTP != nil {
		err = errors.Join(err, s.adminHTTP.Shutdown(ctx))
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return errors.Join(err, s.Gateway.Close(ctx))
}

// Kill drops every connection and the store at once, as a crash would
// (tests).
func (s *Server) Kill() {
	s.stopWatching()
	s.http.Close()
	if s.adminHTTP != nil {
		s.adminHTTP.Close()
	}
	s.Gateway.Kill()
}
