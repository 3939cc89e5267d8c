package faultnet

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

func TestProxyForwardsWithoutFaults(t *testing.T) {
	var hits atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/xml")
		w.WriteHeader(http.StatusAccepted)
		w.Write([]byte("got " + string(b) + " at " + r.URL.Path + " action " + r.Header.Get("SOAPAction")))
	}))
	defer target.Close()
	p := New(Config{Target: target.URL})
	front := httptest.NewServer(p)
	defer front.Close()

	req, _ := http.NewRequest("POST", front.URL+"/rmp", strings.NewReader("m1"))
	req.Header.Set("SOAPAction", `"a"`)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 202 || string(b) != `got m1 at /rmp action "a"` || resp.Header.Get("Content-Type") != "text/xml" {
		t.Fatalf("status %d body %q", resp.StatusCode, b)
	}
	if hits.Load() != 1 || p.Stats().Requests != 1 {
		t.Fatalf("hits %d stats %+v", hits.Load(), p.Stats())
	}
}

func TestProxyFaultsAreSeededAndCounted(t *testing.T) {
	run := func(seed uint64) (Stats, int32, int) {
		var hits atomic.Int32
		target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
		defer target.Close()
		p := New(Config{Target: target.URL, DropRequest: 0.2, DropResponse: 0.2, Duplicate: 0.2, Seed: seed})
		front := httptest.NewServer(p)
		defer front.Close()
		failures := 0
		for range 200 {
			resp, err := http.Post(front.URL, "text/xml", strings.NewReader("x"))
			if err != nil {
				failures++
				continue
			}
			resp.Body.Close()
		}
		p.Wait()
		return p.Stats(), hits.Load(), failures
	}
	s1, hits1, fail1 := run(7)
	s2, _, _ := run(7)
	if s1 != s2 {
		t.Fatalf("same seed, different faults: %+v vs %+v", s1, s2)
	}
	if s1.DroppedRequests == 0 || s1.DroppedResponses == 0 || s1.Duplicates == 0 {
		t.Fatalf("expected every kind of fault in 200 requests: %+v", s1)
	}
	if int64(fail1) != s1.DroppedRequests+s1.DroppedResponses {
		t.Fatalf("client saw %d failures, proxy dropped %d requests and %d responses", fail1, s1.DroppedRequests, s1.DroppedResponses)
	}
	if want := 200 - s1.DroppedRequests + s1.Duplicates; int64(hits1) != want {
		t.Fatalf("target got %d requests, want %d", hits1, want)
	}
}
