package console

import (
	"bytes"
	"errors"
	"html/template"
	"log"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// view is what the layout renders around a page.
type view struct {
	Title string
	// Nav is the current section: "overview", "groups", "messages", "peers".
	Nav string
	// Refresh is the live-refresh interval in seconds; 0: none.
	Refresh int
	// SignOut shows the sign-out button (a token is configured).
	SignOut bool
	Data    any
}

var pageNames = []string{"overview", "groups", "group", "confirm", "messages", "message", "peers", "login", "error"}

func parsePages() map[string]*template.Template {
	funcs := template.FuncMap{
		"when":       when,
		"whenp":      func(s *string) string { return whenPtr(s) },
		"rangesBar":  rangesBar,
		"rangesText": rangesText,
		"behindGap":  behindGap,
		"chart":      chart,
		"pathEscape": url.PathEscape,
		"number": func(n *uint64) string {
			if n == nil {
				return "—"
			}
			return strconv.FormatUint(*n, 10)
		},
		"deref": func(b *bool) bool { return b != nil && *b },
		"dash": func(s string) string {
			if s == "" {
				return "—"
			}
			return s
		},
	}
	pages := map[string]*template.Template{}
	for _, name := range pageNames {
		pages[name] = template.Must(template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html"))
	}
	return pages
}

// when shows an API instant (RFC 3339) to the second, in UTC.
func when(s string) string {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		if s == "" {
			return "—"
		}
		return s
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

func whenPtr(s *string) string {
	if s == nil {
		return "—"
	}
	return when(*s)
}

// render writes a page; a template error is logged and answered 500.
func (c *Console) render(w http.ResponseWriter, status int, name string, v *view) {
	var buf bytes.Buffer
	if err := c.pages[name].Execute(&buf, v); err != nil {
		log.Printf("console: rendering %s: %v", name, err)
		http.Error(w, "the console could not render this page", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// pageFunc builds one page; an empty name means it answered itself (a
// redirect).
type pageFunc func(q *request) (name string, v *view, err error)

// page authenticates a request and renders what fn builds; an API error
// becomes an error page with its status.
func (c *Console) page(fn pageFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		tok, ok := c.authorized(r)
		if !ok {
			c.renderLogin(w, r, http.StatusUnauthorized, "")
			return
		}
		q := &request{c: c, w: w, r: r, token: tok}
		name, v, err := fn(q)
		if err != nil {
			status := http.StatusBadGateway
			var ae *apiError
			if errors.As(err, &ae) {
				status = ae.status
			}
			c.render(w, status, "error", &view{Title: "Error", SignOut: c.cfg.Token != nil,
				Data: errorData{Status: status, Text: http.StatusText(status), Message: err.Error()}})
			return
		}
		if name == "" {
			return
		}
		v.SignOut = c.cfg.Token != nil
		if v.Refresh == 0 && c.cfg.Refresh > 0 && r.Method == http.MethodGet {
			v.Refresh = max(1, int(c.cfg.Refresh/time.Second))
		}
		if v.Refresh < 0 {
			v.Refresh = 0
		}
		c.render(w, http.StatusOK, name, v)
	}
}

type errorData struct {
	Status        int
	Text, Message string
}

func (c *Console) notFound(w http.ResponseWriter, r *http.Request) {
	if _, ok := c.authorized(r); !ok {
		c.renderLogin(w, r, http.StatusUnauthorized, "")
		return
	}
	c.render(w, http.StatusNotFound, "error", &view{Title: "Not found", SignOut: c.cfg.Token != nil,
		Data: errorData{Status: 404, Text: "Not Found", Message: "No console page at " + strings.TrimSpace(r.URL.Path) + "."}})
}
