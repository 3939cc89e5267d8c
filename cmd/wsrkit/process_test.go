//go:build unix

package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// runMainEnv makes the test binary run main() instead of the tests: the
// process tests start real `wsrkit serve` processes from the test binary
// itself, so no separate go build is needed.
const runMainEnv = "WSRKIT_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// serveProc is a `wsrkit serve` child process on a loopback port.
type serveProc struct {
	cmd    *exec.Cmd
	stderr *lockedBuffer
	url    string
	exited chan struct{} // closed once it exited; status is then set
	status int           // exit status; -1 when a signal ended it
}

var listening = regexp.MustCompile(`msg="wsrkit gateway listening" url=(\S+)`)

// startServeProc starts `wsrkit serve -listen 127.0.0.1:0 -log info args…`
// and waits (bounded) for its listening line. The test's cleanup kills it
// (resuming it first, should it be stopped).
func startServeProc(t *testing.T, args ...string) *serveProc {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	p := &serveProc{stderr: &lockedBuffer{}, exited: make(chan struct{})}
	p.cmd = exec.Command(exe, append([]string{"serve", "-listen", "127.0.0.1:0", "-log", "info", "-allow-outbound", loopbackRanges}, args...)...)
	p.cmd.Env = append(os.Environ(), runMainEnv+"=1")
	p.cmd.Stdout, p.cmd.Stderr = p.stderr, p.stderr
	require.NoError(t, p.cmd.Start())
	go func() {
		p.cmd.Wait()
		p.status = p.cmd.ProcessState.ExitCode()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.cmd.Process.Signal(syscall.SIGCONT)
		p.cmd.Process.Kill()
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			t.Errorf("serve process %d did not end after SIGKILL", p.cmd.Process.Pid)
		}
	})
	deadline := time.After(20 * time.Second)
	for p.url == "" {
		select {
		case <-p.exited:
			t.Fatalf("serve %q exited with %d before listening: %s", args, p.status, p.stderr.String())
		case <-deadline:
			t.Fatalf("serve %q not listening within 20s: %s", args, p.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if m := listening.FindStringSubmatch(p.stderr.String()); m != nil {
			p.url = m[1]
		}
	}
	return p
}

func (p *serveProc) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(sig), "signal %v to serve %s", sig, p.url)
}

// waitLog waits until the process's output holds s, failing the test
// at once, with the output, when the process exits first, and when s did
// not come within d.
func (p *serveProc) waitLog(t *testing.T, s string, d time.Duration) {
	t.Helper()
	deadline := time.After(d)
	for !strings.Contains(p.stderr.String(), s) {
		select {
		case <-p.exited:
			if strings.Contains(p.stderr.String(), s) {
				return
			}
			t.Fatalf("serve %s exited with %d before logging %q: %s", p.url, p.status, s, p.stderr.String())
		case <-deadline:
			t.Fatalf("serve %s did not log %q within %s: %s", p.url, s, d, p.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// wait returns the exit status once the process ended, failing the test
// when it did not end within d.
func (p *serveProc) wait(t *testing.T, d time.Duration, why string) int {
	t.Helper()
	select {
	case <-p.exited:
		return p.status
	case <-time.After(d):
		t.Fatalf("serve %s did not exit within %s (%s): %s", p.url, d, why, p.stderr.String())
	}
	return 0
}

// cliLines returns serve's own lines on stderr (not the log's).
func (p *serveProc) cliLines() []string {
	var out []string
	for _, l := range strings.Split(p.stderr.String(), "\n") {
		if strings.HasPrefix(l, "wsrkit serve:") {
			out = append(out, l)
		}
	}
	return out
}

// pollClient bounds every request a polling check sends: a stopped
// process accepts connections (the kernel does) but never answers.
var pollClient = &http.Client{Timeout: 2 * time.Second}

// gauge reads one unlabelled sample of base's /metrics; -1 when the
// instance does not answer.
func gauge(base, name string) int {
	resp, err := pollClient.Get(base + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, name+" "); ok {
			n, err := strconv.Atoi(v)
			if err == nil {
				return n
			}
		}
	}
	return -1
}

// getJSON is a GET for polling checks: no assertion inside, 0 when the
// request failed.
func getJSON(url string, out any) int {
	resp, err := pollClient.Get(url)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	json.NewDecoder(resp.Body).Decode(out)
	return resp.StatusCode
}
