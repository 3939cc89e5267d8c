package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/wsrkit/wsrkit/internal/faultnet"
	"github.com/wsrkit/wsrkit/internal/gateway"
	"github.com/wsrkit/wsrkit/internal/testtool"
)

const python = "/usr/bin/python3"

// needPython skips (or under CI fails) unless Debian's python3 has zeep,
// spyne and lxml.
func needPython(t *testing.T) {
	t.Helper()
	testtool.Need(t, python, "python3")
	if out, err := exec.Command(python, "-c", "import zeep, spyne, lxml").CombinedOutput(); err != nil {
		testtool.Missing(t, "python3-zeep, python3-spyne or python3-lxml is not installed (apt-get install -y python3-zeep python3-spyne python3-lxml): "+strings.TrimSpace(string(out)))
	}
}

// service is the spyne Shop (testdata/service.py) on a loopback port.
type service struct {
	url string
	log string
}

func startService(t *testing.T) *service {
	t.Helper()
	s := &service{log: filepath.Join(t.TempDir(), "ops.jsonl")}
	cmd := exec.Command(python, "testdata/service.py", s.log)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	port := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if p, ok := strings.CutPrefix(sc.Text(), "listening "); ok {
				port <- p
			}
		}
	}()
	select {
	case p := <-port:
		s.url = "http://127.0.0.1:" + p + "/"
	case <-time.After(30 * time.Second):
		t.Fatalf("spyne service did not start: %s", stderr.String())
	}
	return s
}

// op is one line of the service's log: an operation that ran.
type op struct {
	Op     string `json:"op"`
	Item   string `json:"item"`
	Qty    int    `json:"qty"`
	Text   string `json:"text"`
	Action string `json:"action"`
}

func (s *service) ops(t *testing.T) []op {
	t.Helper()
	b, err := os.ReadFile(s.log)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	var out []op
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l == "" {
			continue
		}
		var o op
		require.NoError(t, json.Unmarshal([]byte(l), &o), l)
		out = append(out, o)
	}
	return out
}

// result is one line of client.py's output.
type result struct {
	OK    *string `json:"ok"`
	Fault *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"fault"`
	Error string `json:"error"`
}

func (r result) String() string {
	switch {
	case r.Fault != nil:
		return "fault " + r.Fault.Code[strings.LastIndexByte(r.Fault.Code, ':')+1:] + ": " + r.Fault.Message
	case r.Error != "":
		return "error " + r.Error
	case r.OK == nil:
		return "ok <none>"
	}
	return "ok " + *r.OK
}

// call runs the zeep client against address and returns one line a call.
func call(t *testing.T, address, version, key string, calls []map[string]any) []string {
	t.Helper()
	b, err := json.Marshal(calls)
	require.NoError(t, err)
	if key == "" {
		key = "-"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, python, "testdata/client.py", "testdata/shop.wsdl", address, version, key, string(b)).Output()
	var stderr string
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = string(ee.Stderr)
	}
	require.NoError(t, err, stderr)
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var r result
		require.NoError(t, json.Unmarshal([]byte(l), &r), l)
		lines = append(lines, r.String())
	}
	return lines
}

// freeAddr returns a loopback address nothing listens on, so that a
// gateway can be restarted on the same URL.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	a := ln.Addr().String()
	ln.Close()
	return a
}

func startGateway(t *testing.T, mod func(*gateway.Config)) *gateway.Server {
	t.Helper()
	cfg := gateway.DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	cfg.DataDir = t.TempDir()
	cfg.RetryInterval = 300 * time.Millisecond
	cfg.RetryMaxInterval = time.Second
	cfg.MaxRetries = 100
	// The services and peers are on loopback, refused by default (#18).
	cfg.AllowOutbound = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	mod(&cfg)
	s, err := gateway.Start(cfg, gateway.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { stop(s) })
	return s
}

var stopped sync.Map

func stop(s *gateway.Server) {
	if _, done := stopped.LoadOrStore(s, true); done {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s.Shutdown(ctx)
}

var shopCalls = []map[string]any{
	{"op": "PlaceOrder", "item": "apple", "qty": 2},
	{"op": "CancelOrder", "item": "pear", "qty": 1},
	{"op": "PlaceOrder", "item": "refused", "qty": 1},
	{"op": "Notify", "text": "hello"},
}

const shopNS = "urn:wsrkit:interop:shop/"

var wantAnswers = map[string][]string{
	"1.1": {"ok placed 2 apple", "ok cancelled pear", "fault Client: order refused: refused", "ok <none>"},
	"1.2": {"ok placed 2 apple", "ok cancelled pear", "fault Sender: order refused: refused", "ok <none>"},
}

var wantOps = []op{
	{Op: "place", Item: "apple", Qty: 2, Action: shopNS + "Place"},
	{Op: "cancel", Item: "pear", Qty: 1, Action: shopNS + "Cancel"},
	{Op: "refused", Item: "refused", Action: shopNS + "Place"},
	{Op: "notify", Text: "hello", Action: shopNS + "Notify"},
}

// A zeep client and a spyne service that know nothing of WS-R exchange
// requests, responses, a business fault and a one-way call through gateway
// A (-route) and gateway B (-deliver), in SOAP 1.1 and 1.2, over a link
// that loses requests and answers: the operation the client's SOAPAction
// names runs, each exactly once, and every answer reaches the client.
func TestZeepThroughTwoGatewaysToSpyne(t *testing.T) {
	needPython(t)
	svc := startService(t)
	b := startGateway(t, func(c *gateway.Config) { c.Deliver = svc.url })
	// Half of the requests or their answers are lost between A and B: A
	// resends, B answers the copies from its state (D18, R45).
	lossy := faultnet.New(faultnet.Config{Target: b.URL(), DropRequest: 0.25, DropResponse: 0.25, Seed: 7})
	link := httptest.NewServer(lossy)
	defer link.Close()
	a := startGateway(t, func(c *gateway.Config) { c.Routes = map[string]string{"shop": link.URL + "/rmp"} })

	for _, v := range []string{"1.1", "1.2"} {
		before := len(svc.ops(t))
		got := call(t, a.URL()+"/soap/shop", v, "", shopCalls)
		require.Equal(t, wantAnswers[v], got, "SOAP %s answers", v)
		require.Equal(t, wantOps, svc.ops(t)[before:], "SOAP %s: operations run, each once", v)
	}
	st := lossy.Stats()
	require.NotZero(t, st.DroppedResponses, "some answers were lost, so B answered copies: %+v", st)
	require.NotZero(t, st.DroppedRequests, "%+v", st)
}

// An ordered group (WSRKit-Group-Key) survives a restart of gateway B in
// the middle: every order runs once, in order, and every client call gets
// its own business response.
func TestZeepOrderedGroupAcrossRestartOfB(t *testing.T) {
	needPython(t)
	svc := startService(t)
	addr := freeAddr(t)
	dataB := t.TempDir()
	open := func() *gateway.Server {
		return startGateway(t, func(c *gateway.Config) { c.Listen, c.DataDir, c.Deliver = addr, dataB, svc.url })
	}
	b := open()
	a := startGateway(t, func(c *gateway.Config) { c.Routes = map[string]string{"shop": "http://" + addr + "/rmp"} })

	var calls []map[string]any
	var want []string
	for i := range 12 {
		item := fmt.Sprintf("item%02d", i)
		calls = append(calls, map[string]any{"op": "PlaceOrder", "item": item, "qty": i + 1})
		want = append(want, fmt.Sprintf("ok placed %d %s", i+1, item))
	}
	done := make(chan []string, 1)
	go func() { done <- call(t, a.URL()+"/soap/shop", "1.1", "orders", calls) }()
	require.Eventually(t, func() bool { return len(svc.ops(t)) >= 4 }, time.Minute, 20*time.Millisecond)
	stop(b)
	b = open()
	got := <-done
	require.Equal(t, want, got)
	ops := svc.ops(t)
	require.Len(t, ops, len(calls), "each order ran exactly once: %+v", ops)
	for i, o := range ops {
		require.Equal(t, fmt.Sprintf("item%02d", i), o.Item, "in order")
	}
}

// A sender whose destination is the spyne service itself (no RMP) is told
// apart from a dead one: it fails with the service's SOAP fault code, or
// stays pending with a lastError saying what came back.
func TestSenderToAPlainSOAPService(t *testing.T) {
	needPython(t)
	svc := startService(t)
	a := startGateway(t, func(c *gateway.Config) {})
	body := `<Order xmlns="urn:wsrkit:interop:shop"><item>direct</item><qty>1</qty></Order>`
	req, _ := json.Marshal(map[string]any{"to": svc.url, "ack": true, "body": body, "action": shopNS + "Place"})
	resp, err := http.Post(a.URL()+"/v1/messages", "application/json", bytes.NewReader(req))
	require.NoError(t, err)
	var ans gateway.SubmitAnswer
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&ans))
	resp.Body.Close()
	require.Equal(t, 202, resp.StatusCode)
	var st gateway.MessageStatus
	require.Eventually(t, func() bool {
		r, err := http.Get(a.URL() + "/v1/messages/" + ans.ID)
		if err != nil {
			return false
		}
		defer r.Body.Close()
		st = gateway.MessageStatus{}
		json.NewDecoder(r.Body).Decode(&st)
		return st.State == "failed" || st.LastError != ""
	}, 30*time.Second, 50*time.Millisecond)
	if st.State == "failed" {
		require.Equal(t, "fault", st.Reason)
		require.NotEmpty(t, st.Fault)
	} else {
		require.Equal(t, "pending", st.State)
		require.Contains(t, st.LastError, "without wsrm:Response")
	}
}
