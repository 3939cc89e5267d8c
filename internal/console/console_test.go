package console_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/wsrkit/wsrkit/internal/benchkit"
	"github.com/wsrkit/wsrkit/internal/gateway"
	"github.com/wsrkit/wsrkit/soap"
)

// start runs a loopback gateway with edit applied, stopped with t.
func start(t testing.TB, edit func(*gateway.Config)) *gateway.Server {
	t.Helper()
	cfg := gateway.DefaultConfig()
	cfg.Listen, cfg.DataDir = "127.0.0.1:0", t.TempDir()
	cfg.AllowOutbound = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	edit(&cfg)
	s, err := gateway.Start(cfg, gateway.Options{})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.Shutdown(ctx)
	})
	return s
}

// fetch GETs a page with an optional bearer token; it returns the status
// and the body.
func fetch(t testing.TB, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := noRedirect.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func postJSON(t testing.TB, url string, in, out any) int {
	t.Helper()
	b, _ := json.Marshal(in)
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	require.NoError(t, err)
	defer resp.Body.Close()
	if out != nil {
		json.NewDecoder(resp.Body).Decode(out)
	}
	return resp.StatusCode
}

func getJSON(t testing.TB, url string, out any) int {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	json.NewDecoder(resp.Body).Decode(out)
	return resp.StatusCode
}

// postRMP POSTs reliable message n of gid straight to a receiver's /rmp.
func postRMP(t testing.TB, base, gid string, n uint64) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/rmp", bytes.NewReader(benchkit.Envelope(t, gid, n)))
	req.Header.Set("Content-Type", soap.ContentTypeSOAP11)
	req.Header.Set("SOAPAction", `""`)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
}

// acknowledged waits until every message of ids is acknowledged.
func acknowledged(t testing.TB, base string, ids []string) {
	t.Helper()
	for _, id := range ids {
		require.Eventually(t, func() bool {
			var ms gateway.MessageStatus
			return getJSON(t, base+"/v1/messages/"+id, &ms) == 200 && ms.State == "acknowledged"
		}, 20*time.Second, 10*time.Millisecond, "message %s acknowledged", id)
	}
}

func deadURL(t testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return "http://" + ln.Addr().String() + "/rmp"
}

// traffic is a receiver B and a sender A with a fake clock: A's group
// "ok" is acknowledged by B, its group "dead" failed at an unreachable
// peer (retries exhausted), and B holds urn:console:stuck's 1 and 2
// behind the gap of 0.
type traffic struct {
	a, b     *gateway.Server
	failedID string
	dead     string
}

func newTraffic(t *testing.T, editA func(*gateway.Config)) *traffic {
	tr := &traffic{b: start(t, func(*gateway.Config) {}), dead: deadURL(t)}
	tr.a = start(t, func(c *gateway.Config) {
		c.FakeClock = true
		c.RetryInterval, c.RetryMaxInterval, c.MaxRetries, c.RetryJitter = time.Second, time.Second, 1, 0
		editA(c)
	})
	var ok []string
	for i := range 5 {
		var ans gateway.SubmitAnswer
		require.Equal(t, 202, postJSON(t, tr.a.URL()+"/v1/messages", map[string]any{"to": tr.b.URL() + "/rmp", "group": "ok",
			"ordered": true, "ack": true, "dupElim": true, "body": fmt.Sprintf("<o n=\"%d\"/>", i)}, &ans))
		ok = append(ok, ans.ID)
	}
	acknowledged(t, tr.a.URL(), ok)
	var ans gateway.SubmitAnswer
	require.Equal(t, 202, postJSON(t, tr.a.URL()+"/v1/messages", map[string]any{"to": tr.dead, "group": "dead",
		"ordered": true, "ack": true, "dupElim": true, "body": "<o/>"}, &ans))
	tr.failedID = ans.ID
	postRMP(t, tr.b.URL(), "urn:console:stuck", 1)
	postRMP(t, tr.b.URL(), "urn:console:stuck", 2)
	// Each resend's result comes back after the clock moved: keep moving
	// it until the retries are exhausted (D26).
	require.Eventually(t, func() bool {
		require.Equal(t, 200, postJSON(t, tr.a.URL()+"/v1/clock", map[string]string{"advance": "1s"}, nil))
		var ms gateway.MessageStatus
		return getJSON(t, tr.a.URL()+"/v1/messages/"+tr.failedID, &ms) == 200 && ms.State == "failed"
	}, 20*time.Second, 20*time.Millisecond)
	return tr
}

// TestConsolePages: every page renders from the JSON API — the charts
// count the hour's traffic, the stuck group shows with its gap on the
// overview, the groups page and its own page, the failed message with its
// reason a click from the overview, the dead peer unreachable — and
// passes the accessibility checks of checkAccessible (#21).
func TestConsolePages(t *testing.T) {
	tr := newTraffic(t, func(*gateway.Config) {})
	a, b := tr.a.URL(), tr.b.URL()

	st, body := fetch(t, b+"/console/", "")
	require.Equal(t, 200, st)
	checkAccessible(t, "B overview", body)
	require.Regexp(t, `class="chart chart-accepted"[^>]*data-total="[1-9]`, body, "accepted per minute")
	require.Contains(t, body, `href="/console/groups/`+url.PathEscape("urn:console:stuck")+`?role=receiver"`, "the stuck group, one click away")
	require.Contains(t, body, `data-gaps="1"`)

	st, body = fetch(t, a+"/console/", "")
	require.Equal(t, 200, st)
	require.Regexp(t, `class="chart chart-submitted"[^>]*data-total="6"`, body)
	require.Regexp(t, `class="chart chart-failed"[^>]*data-total="1"`, body)
	link := `/console/messages/` + url.PathEscape(tr.failedID)
	require.Contains(t, body, `href="`+link+`"`, "the failed message, one click away")
	require.Contains(t, body, "retries-exhausted")

	st, body = fetch(t, a+link, "")
	require.Equal(t, 200, st, body)
	checkAccessible(t, "message", body)
	require.Regexp(t, `<dt>Reason</dt><dd class="reason">retries-exhausted</dd>`, body, "the reason, in two clicks")
	require.Regexp(t, `<dt>State</dt><dd><strong class="state-failed">failed</strong>`, body)

	st, body = fetch(t, b+"/console/groups?gap=true", "")
	require.Equal(t, 200, st)
	checkAccessible(t, "groups", body)
	require.Contains(t, body, "urn:console:stuck")
	require.NotContains(t, body, ">ok<", "only groups with a gap")
	require.Contains(t, body, "Matching groups: 1.")

	st, body = fetch(t, b+"/console/groups/"+url.PathEscape("urn:console:stuck")+"?role=receiver", "")
	require.Equal(t, 200, st)
	checkAccessible(t, "group", body)
	require.Contains(t, body, "Missing: 0")
	require.Contains(t, body, `held for it in an ordered group: <span class="held-text">1–2</span>`)
	require.Contains(t, body, `aria-label="received 1–2; missing 0"`)
	require.Contains(t, body, "Abort this group…")

	st, body = fetch(t, a+"/console/groups?role=sender&q=", "")
	require.Equal(t, 200, st)
	require.Contains(t, body, "Matching groups: 1.")

	st, body = fetch(t, a+"/console/messages?state=failed&q="+url.QueryEscape(tr.failedID[:10]), "")
	require.Equal(t, 200, st)
	checkAccessible(t, "messages", body)
	require.Contains(t, body, tr.failedID)
	require.Contains(t, body, "Matching outcomes: 1 ")

	st, body = fetch(t, a+"/console/peers", "")
	require.Equal(t, 200, st)
	checkAccessible(t, "peers", body)
	require.Regexp(t, regexp.QuoteMeta(tr.dead)+`</code></td>\s*<td><span class="badge bad">unreachable`, body)
	require.Regexp(t, regexp.QuoteMeta(b+"/rmp")+`</code></td>\s*<td><span class="badge ok">reachable`, body)

	st, body = fetch(t, a+"/console/groups/"+url.PathEscape("urn:nope"), "")
	require.Equal(t, 404, st)
	require.Contains(t, body, "unknown group urn:nope")
	st, _ = fetch(t, a+"/console/nowhere", "")
	require.Equal(t, 404, st)
	st, body = fetch(t, a+"/console/static/console.css", "")
	require.Equal(t, 200, st)
	require.Contains(t, body, "--gap")
}

// TestConsoleAbort: the abort action has a confirmation page; its form
// aborts the receiving group (it leaves the listing) and, on the sending
// side, fails the unacknowledged messages with group-aborted.
func TestConsoleAbort(t *testing.T) {
	tr := newTraffic(t, func(*gateway.Config) {})
	b := tr.b.URL()
	path := "/console/groups/" + url.PathEscape("urn:console:stuck") + "/abort"
	st, body := fetch(t, b+path+"?role=receiver", "")
	require.Equal(t, 200, st)
	checkAccessible(t, "confirm", body)
	require.Contains(t, body, `<button type="submit" class="danger" id="confirm-abort">Abort group</button>`)
	require.Equal(t, 200, getJSON(t, b+"/v1/groups/"+url.PathEscape("urn:console:stuck"), &gateway.GroupJSON{}), "not before the confirmation")

	resp, err := noRedirect.PostForm(b+path, url.Values{"role": {"receiver"}})
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Contains(t, resp.Header.Get("Location"), "/console/groups?aborted=")
	require.Equal(t, 404, getJSON(t, b+"/v1/groups/"+url.PathEscape("urn:console:stuck"), &gateway.GroupJSON{}))
	st, body = fetch(t, b+resp.Header.Get("Location"), "")
	require.Equal(t, 200, st)
	require.Contains(t, body, `<p role="status" class="notice">Group urn:console:stuck (receiver side) aborted.</p>`)

	// The sending side: a group whose message is still pending.
	var ans gateway.SubmitAnswer
	require.Equal(t, 202, postJSON(t, tr.a.URL()+"/v1/messages", map[string]any{"to": tr.dead, "group": "pending",
		"ordered": true, "ack": true, "dupElim": true, "expiresIn": "1h", "body": "<o/>"}, &ans))
	resp, err = noRedirect.PostForm(tr.a.URL()+"/console/groups/"+url.PathEscape(ans.GroupID)+"/abort", url.Values{"role": {"sender"}})
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Eventually(t, func() bool {
		var ms gateway.MessageStatus
		return getJSON(t, tr.a.URL()+"/v1/messages/"+ans.ID, &ms) == 200 && ms.Reason == "group-aborted"
	}, 10*time.Second, 10*time.Millisecond)

	resp, err = noRedirect.PostForm(b+path, url.Values{"role": {"both"}})
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 400, resp.StatusCode)
}

// TestConsoleAuth: with -admin-token-file the console asks for the token:
// a login page (401) without it, the pages with it as a bearer token or
// through the login form's HttpOnly, SameSite=Strict cookie; a wrong token
// is refused; a cross-origin POST is refused (CSRF); sign-out clears the
// cookie; a login never redirects off the console.
func TestConsoleAuth(t *testing.T) {
	const tok = "console-admin-token"
	file := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(file, []byte(tok+"\n"), 0o600))
	s := start(t, func(c *gateway.Config) { c.AdminTokenFile = file })
	base := s.URL()
	for _, p := range []string{"/console/", "/console/groups", "/console/messages", "/console/peers", "/console/groups/x", "/console/messages/x", "/console/nowhere"} {
		st, body := fetch(t, base+p, "")
		require.Equal(t, 401, st, p)
		require.Contains(t, body, `<label for="token">Admin token</label>`, p)
		require.NotContains(t, body, "chart", p)
		st, _ = fetch(t, base+p, "wrong")
		require.Equal(t, 401, st, p)
	}
	st, body := fetch(t, base+"/console/", tok)
	require.Equal(t, 200, st)
	require.Contains(t, body, "Sign out")

	login := func(token, next string, hdr map[string]string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, base+"/console/login", strings.NewReader(url.Values{"token": {token}, "next": {next}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := noRedirect.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp
	}
	resp := login("wrong", "/console/peers", nil)
	require.Equal(t, 401, resp.StatusCode)
	require.Empty(t, resp.Cookies())
	resp = login(tok, "/console/peers", map[string]string{"Origin": base, "Sec-Fetch-Site": "same-origin"})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, "/console/peers", resp.Header.Get("Location"))
	cookies := resp.Cookies()
	require.Len(t, cookies, 1)
	ck := cookies[0]
	require.True(t, ck.HttpOnly)
	require.Equal(t, http.SameSiteStrictMode, ck.SameSite)
	require.Equal(t, "/console/", ck.Path)
	require.NotContains(t, ck.Value, tok, "encoded, not the raw token")

	withCookie := func(method, path string, hdr map[string]string, form url.Values) *http.Response {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.AddCookie(ck)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := noRedirect.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp
	}
	require.Equal(t, 200, withCookie("GET", "/console/groups", nil, nil).StatusCode)
	postRMP(t, base, "urn:console:csrf", 1)
	evil := withCookie("POST", "/console/groups/"+url.PathEscape("urn:console:csrf")+"/abort",
		map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}, url.Values{"role": {"receiver"}})
	require.Equal(t, http.StatusForbidden, evil.StatusCode, "a cross-site POST")
	req, _ := http.NewRequest(http.MethodGet, base+"/v1/groups/"+url.PathEscape("urn:console:csrf"), nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	g, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	g.Body.Close()
	require.Equal(t, 200, g.StatusCode, "the group survived the forged request")

	for _, next := range []string{"//evil.example/", "https://evil.example/", "/\\evil.example", "/v1/groups"} {
		resp = login(tok, next, nil)
		require.Equal(t, "/console/", resp.Header.Get("Location"), next)
	}
	out := withCookie("POST", "/console/logout", map[string]string{"Sec-Fetch-Site": "same-origin"}, nil)
	require.Equal(t, http.StatusSeeOther, out.StatusCode)
	require.Len(t, out.Cookies(), 1)
	require.Equal(t, -1, out.Cookies()[0].MaxAge)

	// The console sits on the admin listener when there is one.
	sep := start(t, func(c *gateway.Config) { c.AdminListen = "127.0.0.1:0" })
	st, _ = fetch(t, sep.URL()+"/console/", "")
	require.Equal(t, 404, st, "not on the partners' listener")
	st, _ = fetch(t, sep.AdminURL()+"/console/", "")
	require.Equal(t, 200, st)
	off := start(t, func(c *gateway.Config) { c.Console = false })
	st, _ = fetch(t, off.URL()+"/console/", "")
	require.Equal(t, 404, st, "-console=false")
}

var (
	tagRE      = regexp.MustCompile(`(?s)<(button|select|input|svg|a|html|img)\b([^>]*)>`)
	buttonRE   = regexp.MustCompile(`(?s)<button\b[^>]*>(.*?)</button>`)
	attrRE     = regexp.MustCompile(`([a-z-]+)="([^"]*)"`)
	labelForRE = regexp.MustCompile(`<label for="([^"]+)"`)
)

// checkAccessible checks what a page's markup can show: html has a lang;
// every button has text; every visible form control has a label; every
// SVG is an image with a text alternative; every link has text.
func checkAccessible(t *testing.T, page, body string) {
	t.Helper()
	labels := map[string]bool{}
	for _, m := range labelForRE.FindAllStringSubmatch(body, -1) {
		labels[m[1]] = true
	}
	for _, m := range buttonRE.FindAllStringSubmatch(body, -1) {
		require.NotEmpty(t, strings.TrimSpace(regexp.MustCompile(`<[^>]+>`).ReplaceAllString(m[1], "")), "%s: a button without a name: %s", page, m[0])
	}
	for _, m := range tagRE.FindAllStringSubmatch(body, -1) {
		attrs := map[string]string{}
		for _, a := range attrRE.FindAllStringSubmatch(m[2], -1) {
			attrs[a[1]] = a[2]
		}
		switch m[1] {
		case "html":
			require.Equal(t, "en", attrs["lang"], page)
		case "input", "select":
			if attrs["type"] == "hidden" {
				continue
			}
			require.True(t, labels[attrs["id"]], "%s: %s without a label: %s", page, m[1], m[0])
		case "svg":
			require.Equal(t, "img", attrs["role"], "%s: %s", page, m[0])
			require.NotEmpty(t, attrs["aria-label"], "%s: %s", page, m[0])
		}
	}
}
