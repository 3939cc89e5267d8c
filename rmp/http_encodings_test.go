package rmp

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"unicode/utf16"

	"github.com/stretchr/testify/require"

	"github.com/wsrkit/wsrkit/soap"
	"github.com/wsrkit/wsrkit/store/memstore"
)

// compressed is b written through a compressor.
func compressed(b []byte, newWriter func(io.Writer) io.WriteCloser) []byte {
	var buf bytes.Buffer
	zw := newWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

func gzipped(b []byte) []byte {
	return compressed(b, func(w io.Writer) io.WriteCloser { return gzip.NewWriter(w) })
}

func zlibbed(b []byte) []byte {
	return compressed(b, func(w io.Writer) io.WriteCloser { return zlib.NewWriter(w) })
}

func utf16LE(s string) []byte {
	out := []byte{0xFF, 0xFE}
	for _, u := range utf16.Encode([]rune(s)) {
		out = append(out, byte(u), byte(u>>8))
	}
	return out
}

// Issue 17 item 5 at the RMP endpoint: a gzip and a UTF-16 envelope are
// served like a plain one (acknowledged, delivered in UTF-8); a bomb is
// 413, an unknown coding 415.
func TestServeHTTPEncodings(t *testing.T) {
	rc := newCollector()
	cfg := nodeConfig("r", memstore.New(memstore.Options{}), rc)
	cfg.MaxBody = 1 << 20
	n, err := Open(cfg)
	require.NoError(t, err)
	defer n.Close(context.Background())
	srv := httptest.NewServer(n)
	defer srv.Close()
	envelope := func(gid string) []byte { return requestEnvelope(t, gid, []byte(`<p:b xmlns:p="urn:p">größe</p:b>`)) }
	post := func(body []byte, ct, enc string) (int, string) {
		req, err := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", ct)
		if enc != "" {
			req.Header.Set("Content-Encoding", enc)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	st, ack := post(gzipped(envelope("urn:gz")), soap.ContentTypeSOAP11, "gzip")
	require.Equal(t, http.StatusOK, st, ack)
	require.Contains(t, ack, `groupId="urn:gz"`)
	st, ack = post(zlibbed(envelope("urn:deflate")), soap.ContentTypeSOAP11, "deflate")
	require.Equal(t, http.StatusOK, st, ack)
	require.Contains(t, ack, `groupId="urn:deflate"`)
	st, ack = post(utf16LE(`<?xml version="1.0" encoding="UTF-16"?>`+string(envelope("urn:utf16"))), "text/xml; charset=utf-16", "")
	require.Equal(t, http.StatusOK, st, ack)
	require.Contains(t, ack, `groupId="urn:utf16"`)
	rc.waitFor(t, "three deliveries", func() bool { return len(rc.delivered) == 3 })
	for _, d := range rc.delivered {
		require.Contains(t, d, ">größe</p:b>", "delivered in UTF-8")
	}

	st, _ = post(gzipped(append(envelope("urn:bomb"), make([]byte, 2<<20)...)), soap.ContentTypeSOAP11, "gzip")
	require.Equal(t, http.StatusRequestEntityTooLarge, st)
	st, msg := post(envelope("urn:br"), soap.ContentTypeSOAP11, "br")
	require.Equal(t, http.StatusUnsupportedMediaType, st)
	require.Contains(t, msg, `"br"`)
	require.Zero(t, n.cfg.Bodies.InUse(), "every body is given back once answered")
}
