package gateway

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
)

// adminToken is the bearer token of -admin-token-file, re-read on reload.
// Only its SHA-256 is kept, so compares take the same time for every
// length (constant time).
type adminToken struct {
	file string
	sum  atomic.Pointer[[sha256.Size]byte]
}

func loadAdminToken(file string) (*adminToken, error) { return loaded(&adminToken{file: file}) }

// reload reads the file again; on an error the old token stays in force.
func (t *adminToken) reload() error {
	b, err := os.ReadFile(t.file)
	if err != nil {
		return fmt.Errorf("-admin-token-file: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return errors.New("-admin-token-file: the file is empty")
	}
	if strings.ContainsAny(tok, " \t\r\n") {
		return errors.New("-admin-token-file: the token must be one word")
	}
	sum := sha256.Sum256([]byte(tok))
	t.sum.Store(&sum)
	return nil
}

// allows reports whether r carries Authorization: Bearer <token>.
func (t *adminToken) allows(r *http.Request) bool {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	return t.matches(strings.TrimSpace(tok))
}

// matches reports, in constant time, whether tok is the token.
func (t *adminToken) matches(tok string) bool {
	got := sha256.Sum256([]byte(tok))
	want := t.sum.Load()
	return subtle.ConstantTimeCompare(got[:], want[:]) == 1
}

// admin guards an admin route with the token; without -admin-token-file
// it is open (Validate keeps that to loopback).
func (g *Gateway) admin(h http.Handler) http.Handler {
	if g.token == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !g.token.allows(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="wsrkit admin"`)
			writeError(w, http.StatusUnauthorized, "this admin request needs Authorization: Bearer <token> (-admin-token-file)")
			return
		}
		h.ServeHTTP(w, r)
	})
}
