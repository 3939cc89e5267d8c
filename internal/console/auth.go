package console

import (
	"encoding/base64"
	"net/http"
	"strings"
)

// credential is the token a request carries: Authorization: Bearer, else
// the login cookie; "" when none.
func credential(r *http.Request) string {
	if scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") {
		return strings.TrimSpace(tok)
	}
	if ck, err := r.Cookie(cookieName); err == nil {
		if b, err := base64.RawURLEncoding.DecodeString(ck.Value); err == nil {
			return string(b)
		}
	}
	return ""
}

// authorized returns the request's token and whether it may see the
// console: always when the API asks for no token.
func (c *Console) authorized(r *http.Request) (string, bool) {
	tok := credential(r)
	if c.cfg.Token == nil {
		return tok, true
	}
	return tok, tok != "" && c.cfg.Token(tok)
}

// safeNext is where a login returns to: a console path, never another
// site ("//host", "/\\host").
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/console/") || strings.ContainsAny(next, "\\\r\n") || strings.HasPrefix(next, "//") {
		return "/console/"
	}
	return next
}

type loginData struct {
	Next, Error string
}

func (c *Console) renderLogin(w http.ResponseWriter, r *http.Request, status int, msg string) {
	next := r.URL.RequestURI()
	if r.Method == http.MethodPost || r.URL.Path == "/console/login" {
		next = r.FormValue("next")
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="wsrkit admin"`)
	c.render(w, status, "login", &view{Title: "Sign in", Data: loginData{Next: safeNext(next), Error: msg}})
}

func (c *Console) loginForm(w http.ResponseWriter, r *http.Request) {
	if _, ok := c.authorized(r); ok {
		http.Redirect(w, r, safeNext(r.FormValue("next")), http.StatusSeeOther)
		return
	}
	c.renderLogin(w, r, http.StatusUnauthorized, "")
}

// login checks the token typed into the form and sets the cookie: the
// token itself (base64url), so that the console can present it to the API.
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 8<<10)
	tok := strings.TrimSpace(r.FormValue("token"))
	if c.cfg.Token != nil && (tok == "" || !c.cfg.Token(tok)) {
		c.renderLogin(w, r, http.StatusUnauthorized, "That is not the admin token (-admin-token-file).")
		return
	}
	if c.cfg.Token != nil {
		http.SetCookie(w, &http.Cookie{Name: cookieName, Value: base64.RawURLEncoding.EncodeToString([]byte(tok)), Path: "/console/", HttpOnly: true,
			Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
	}
	http.Redirect(w, r, safeNext(r.FormValue("next")), http.StatusSeeOther)
}

func (c *Console) logout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/console/", MaxAge: -1, HttpOnly: true,
		Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/console/login", http.StatusSeeOther)
}
