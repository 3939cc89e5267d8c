package gateway

import (
	"net/http"

	"github.com/wsrkit/wsrkit/internal/console"
)

// newConsole is the web console over api, the mux it is mounted in (the
// admin listener's, or the single one): it calls the JSON API there with
// the operator's token, so the API's authentication applies to it too.
func (g *Gateway) newConsole(api *http.ServeMux) http.Handler {
	cfg := console.Config{API: api}
	if g.token != nil {
		cfg.Token = g.token.matches
	}
	return console.New(cfg)
}
