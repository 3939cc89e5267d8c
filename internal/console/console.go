// Package console is wsrkit's web console for operators: server-rendered
// pages over the gateway's JSON API (stuck groups and their gaps, failed
// messages and why, peers, throughput), with its templates, CSS and a
// little JavaScript embedded in the binary. It reads only the JSON API,
// called in process with the operator's credentials (#21).
package console

import (
	"embed"
	"html/template"
	"io/fs"
	"net/http"
	"time"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Config configures a console.
type Config struct {
	// API serves the gateway's JSON API (/v1/…) with its authentication;
	// the console calls it in process, passing the operator's token as a
	// bearer token.
	API http.Handler
	// Token reports whether a token is the admin token; nil when the API
	// asks for none (a loopback gateway without -admin-token-file).
	Token func(token string) bool
	// Refresh is how often the pages poll for fresh data [5s]; a negative
	// value turns live refresh off.
	Refresh time.Duration
}

// Console serves the pages under /console/.
type Console struct {
	cfg    Config
	pages  map[string]*template.Template
	static http.Handler
	mux    *http.ServeMux
}

// cookieName is the cookie the login form sets: the admin token itself,
// HttpOnly, SameSite=Strict, Secure over TLS, for /console/ only.
const cookieName = "wsrkit_console"

// New returns the console; mount it at /console/.
func New(cfg Config) *Console {
	if cfg.Refresh == 0 {
		cfg.Refresh = 5 * time.Second
	}
	sub, _ := fs.Sub(staticFS, "static")
	c := &Console{cfg: cfg, pages: parsePages(), static: http.StripPrefix("/console/static/", http.FileServerFS(sub))}
	m := http.NewServeMux()
	m.HandleFunc("GET /console/{$}", c.page(c.overview))
	m.HandleFunc("GET /console/groups", c.page(c.groups))
	m.HandleFunc("GET /console/groups/{groupId}", c.page(c.group))
	m.HandleFunc("GET /console/groups/{groupId}/abort", c.page(c.confirmAbort))
	m.HandleFunc("POST /console/groups/{groupId}/abort", c.page(c.abort))
	m.HandleFunc("GET /console/messages", c.page(c.messages))
	m.HandleFunc("GET /console/messages/{id}", c.page(c.message))
	m.HandleFunc("GET /console/peers", c.page(c.peers))
	m.HandleFunc("GET /console/login", c.loginForm)
	m.HandleFunc("POST /console/login", c.login)
	m.HandleFunc("POST /console/logout", c.logout)
	m.HandleFunc("GET /console/static/", c.serveStatic)
	m.HandleFunc("/console/", c.notFound)
	c.mux = m
	return c
}

// ServeHTTP serves the console with its security headers; a cross-origin
// POST (CSRF) is refused before any handler sees it.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	csrf.Handler(c.mux).ServeHTTP(w, r)
}

// csrf refuses non-safe requests from another origin (Sec-Fetch-Site, or
// Origin against Host); the SameSite=Strict cookie is the second guard.
var csrf = http.NewCrossOriginProtection()

func (c *Console) serveStatic(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-cache")
	c.static.ServeHTTP(w, r)
}
