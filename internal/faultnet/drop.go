package faultnet

import (
	"bytes"
	"io"
	"net/http"
)

// Drop is a scripted lossy link: it forwards each POST to target()+"/rmp"
// and answers 503 without forwarding those whose body lose accepts (a
// request lost on the way). target is read per request, so that the
// receiver may restart on another port.
func Drop(target func() string, lose func(body []byte) bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if lose(body) {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		req, _ := http.NewRequest(http.MethodPost, target()+"/rmp", bytes.NewReader(body))
		req.Header = r.Header.Clone()
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		defer res.Body.Close()
		for k, v := range res.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(res.StatusCode)
		io.Copy(w, res.Body)
	})
}
