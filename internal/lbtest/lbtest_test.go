package lbtest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestFrontRoundRobinRemoveAndDown: requests alternate over the instances,
// a removed one gets no more, an instance that does not answer in time is
// 503, and an empty rotation is 503.
func TestFrontRoundRobinRemoveAndDown(t *testing.T) {
	named := func(name string) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, name+":"+r.URL.RequestURI()+":"+string(b))
		}))
	}
	a, b := named("a"), named("b")
	defer a.Close()
	defer b.Close()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { time.Sleep(time.Second) }))
	defer slow.Close()
	f := New(200*time.Millisecond, a.URL, b.URL)
	srv := httptest.NewServer(f)
	defer srv.Close()
	post := func() (int, string) {
		resp, err := http.Post(srv.URL+"/rmp?shard=1", "text/xml", strings.NewReader("x"))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	var got []string
	for range 4 {
		_, body := post()
		got = append(got, body)
	}
	want := []string{"a:/rmp?shard=1:x", "b:/rmp?shard=1:x", "a:/rmp?shard=1:x", "b:/rmp?shard=1:x"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("got %v, want %v", got, want)
	}
	f.Remove(a.URL)
	if _, body := post(); body != "b:/rmp?shard=1:x" {
		t.Fatalf("after Remove(a): %q", body)
	}
	f.Remove(b.URL)
	if code, _ := post(); code != http.StatusServiceUnavailable {
		t.Fatalf("empty rotation: %d, want 503", code)
	}
	f.Add(slow.URL)
	if code, _ := post(); code != http.StatusServiceUnavailable {
		t.Fatalf("instance not answering: %d, want 503", code)
	}
}
