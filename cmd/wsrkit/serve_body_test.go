package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func gzipBytes(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// post sends body to url with the given headers and returns the status,
// the answer's headers and body.
func post(t *testing.T, url string, body io.Reader, hdr map[string]string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, body)
	require.NoError(t, err)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// Issues 17 and 18 at the gateway: bodies of /rmp and /v1/messages are
// read the same way (decoded, -max-body on the decoded bytes, unknown
// codings 415); a submitted body is parsed as /rmp parses (400, "field":
// "body"); the envelope's single root is checked.
func TestServeReadsBodiesSafely(t *testing.T) {
	s := startServe(t, "-data", t.TempDir(), "-max-body", "1MiB")
	soap11 := map[string]string{"Content-Type": "text/xml; charset=utf-8"}
	gz := map[string]string{"Content-Type": "text/xml; charset=utf-8", "Content-Encoding": "gzip"}
	exp := time.Now().Add(time.Hour)

	st, _, ack := post(t, s.URL()+"/rmp", bytes.NewReader(gzipBytes(envelope(false, "mid:gz@test", -1, false, exp, "<m>gz</m>"))), gz)
	require.Equal(t, 200, st, ack)
	require.Contains(t, ack, `groupId="mid:gz@test"`)
	st, _, _ = post(t, s.URL()+"/rmp", bytes.NewReader(gzipBytes(make([]byte, 4<<20))), gz)
	require.Equal(t, 413, st, "a zip bomb")
	st, hdr, _ := post(t, s.URL()+"/rmp", strings.NewReader("x"), map[string]string{"Content-Type": "text/xml", "Content-Encoding": "br"})
	require.Equal(t, 415, st)
	require.Equal(t, "gzip, deflate", hdr.Get("Accept-Encoding"))

	two := append(envelope(false, "mid:one@test", -1, false, exp, "<m>1</m>"), envelope(false, "mid:two@test", -1, false, exp, "<m>2</m>")...)
	st, _, fault := post(t, s.URL()+"/rmp", bytes.NewReader(two), soap11)
	require.Equal(t, 500, st)
	require.Contains(t, fault, "InvalidRequest")
	st, _, fault = post(t, s.URL()+"/rmp", bytes.NewReader(envelope(false, "mid:x@test", -1, false, exp, "<x:m/>")), soap11)
	require.Equal(t, 500, st)
	require.Contains(t, fault, "InvalidRequest")
	var inbox inboxList
	require.Equal(t, 200, do(t, "GET", s.URL()+"/v1/inbox", nil, &inbox))
	require.Len(t, inbox.Messages, 1, "only the gzip message was taken")

	for _, body := range []string{`<a></b>`, `</S11:Body><S11:Body>`, `</S11:Envelope><S11:Envelope>`, `<x:y/>`, strings.Repeat("<y/>", 10000)} {
		in, _ := json.Marshal(map[string]any{"to": "http://127.0.0.1:1/rmp", "body": body})
		st, _, answer := post(t, s.URL()+"/v1/messages", bytes.NewReader(in), nil)
		require.Equal(t, 400, st, "%.40s", body)
		var e struct{ Error, Field string }
		require.NoError(t, json.Unmarshal([]byte(answer), &e))
		require.Equal(t, "body", e.Field, e.Error)
	}
	in, _ := json.Marshal(map[string]any{"to": "http://127.0.0.1:1/rmp", "body": "<ok/>", "expiresIn": "1s"})
	st, _, answer := post(t, s.URL()+"/v1/messages", bytes.NewReader(gzipBytes(in)), map[string]string{"Content-Encoding": "gzip"})
	require.Equal(t, 202, st, "a gzip submit: %s", answer)
}

// Issue 18 item 2: -max-inflight-bytes is one budget for /rmp and
// /v1/messages: while a slow body holds most of it, another request is
// 503 with Retry-After; once it is answered the budget is free again.
func TestServeInflightBudget(t *testing.T) {
	s := startServe(t, "-data", t.TempDir(), "-max-body", "16KiB", "-max-inflight-bytes", "20KiB")
	// A slow /rmp body of 12 KiB announced: its buffer (12 KiB+1) is
	// reserved when reading starts.
	env := envelope(false, "mid:slow@test", -1, false, time.Now().Add(time.Hour), "<m/>")
	pad := bytes.Repeat([]byte(" "), 12<<10-len(env)) // white space before the root
	pr, pw := io.Pipe()
	slow := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, s.URL()+"/rmp", pr)
		req.ContentLength = int64(len(pad) + len(env))
		req.Header.Set("Content-Type", "text/xml; charset=utf-8")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			slow <- -1
			return
		}
		resp.Body.Close()
		slow <- resp.StatusCode
	}()
	_, err := pw.Write(pad[:1])
	require.NoError(t, err)
	in, _ := json.Marshal(map[string]any{"to": "http://127.0.0.1:1/rmp", "body": "<m>" + strings.Repeat("x", 8<<10) + "</m>"})
	deadline := time.Now().Add(10 * time.Second)
	var st int
	var hdr http.Header
	for time.Now().Before(deadline) {
		if st, hdr, _ = post(t, s.URL()+"/v1/messages", bytes.NewReader(in), nil); st == 503 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.Equal(t, 503, st, "the slow /rmp body holds the budget")
	require.Equal(t, "1", hdr.Get("Retry-After"))
	st, hdr, _ = post(t, s.URL()+"/rmp", bytes.NewReader(envelope(false, "mid:b@test", -1, false, time.Now().Add(time.Hour), "<m>"+strings.Repeat("x", 8<<10)+"</m>")),
		map[string]string{"Content-Type": "text/xml; charset=utf-8"})
	require.Equal(t, 503, st)
	require.Equal(t, "1", hdr.Get("Retry-After"))
	pw.Write(pad[1:])
	pw.Write(env)
	pw.Close()
	require.Equal(t, 200, <-slow)
	st, _, answer := post(t, s.URL()+"/v1/messages", bytes.NewReader(in), nil)
	require.Equal(t, 202, st, "the budget is given back once answered: %s", answer)
}
