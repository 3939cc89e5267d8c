package gateway

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"

	"github.com/wsrkit/wsrkit/rmp/peer"
	"github.com/wsrkit/wsrkit/rmp/receiver"
)

// -peer-allow FILE names the partners that may POST to /rmp at all, and
// the groupId prefixes each may use. One partner a line:
//
//	# comment
//	<identity> <prefix>[,<prefix>…]
//
// The identity is the verified client certificate's peer.Peer ID (its first
// SAN URI, else "dns:" and its first DNS name, else "CN=" and its CN); it
// is everything before the line's last field, so a CN may hold spaces.
// The last field lists the prefixes, comma-separated; "*" allows every
// groupId. A request from an identity not listed (or from none) is
// refused with 403 before its body is read; a message into a groupId
// outside the sender's prefixes gets InvalidMessageId, a PollRequest
// reference to one is answered as about an unknown group.

// maxPeerAllowBytes bounds the file (it is read whole).
const maxPeerAllowBytes = 4 << 20

// peerAllow is the list of -peer-allow, re-read on reload.
type peerAllow struct {
	file    string
	list    atomic.Pointer[map[string][]string] // identity → prefixes ("" is every groupId)
	refused atomic.Uint64                       // requests answered 403
}

func loadPeerAllow(file string) (*peerAllow, error) { return loaded(&peerAllow{file: file}) }

// reload reads the file again; on an error the old list stays in force.
func (a *peerAllow) reload() error {
	b, err := os.ReadFile(a.file)
	if err != nil {
		return fmt.Errorf("-peer-allow: %w", err)
	}
	if len(b) > maxPeerAllowBytes {
		return fmt.Errorf("-peer-allow %s: larger than %d bytes", a.file, maxPeerAllowBytes)
	}
	m, err := parsePeerAllow(b)
	if err != nil {
		return fmt.Errorf("-peer-allow %s: %w", a.file, err)
	}
	a.list.Store(&m)
	return nil
}

// parsePeerAllow reads the format above; an error names its line.
func parsePeerAllow(b []byte) (map[string][]string, error) {
	m := map[string][]string{}
	first := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, maxPeerAllowBytes)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexAny(line, " \t")
		if i < 0 {
			return nil, fmt.Errorf("line %d: want <identity> <prefix>[,<prefix>…], got %q", n, line)
		}
		id, list := strings.TrimSpace(line[:i]), line[i+1:]
		if prev, ok := first[id]; ok {
			return nil, fmt.Errorf("line %d: identity %q is already listed on line %d", n, id, prev)
		}
		var prefixes []string
		for _, p := range strings.Split(list, ",") {
			switch {
			case p == "":
				return nil, fmt.Errorf("line %d: an empty groupId prefix in %q (use * for every groupId)", n, list)
			case p == "*":
				p = ""
			}
			prefixes = append(prefixes, p)
		}
		first[id], m[id] = n, prefixes
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return m, nil
}

// prefixes are the groupId prefixes of identity id; ok false when it is
// not listed.
func (a *peerAllow) prefixes(id string) ([]string, bool) {
	if id == "" {
		return nil, false
	}
	ps, ok := (*a.list.Load())[id]
	return ps, ok
}

// allowGroup is receiver.Config.AllowGroup: whether the sender named peer
// (receiver.VerifiedPeerPrefix and its identity) may use groupID.
func (a *peerAllow) allowGroup(peer, groupID string) bool {
	id, ok := strings.CutPrefix(peer, receiver.VerifiedPeerPrefix)
	if !ok {
		return false
	}
	ps, _ := a.prefixes(id)
	for _, pre := range ps {
		if strings.HasPrefix(groupID, pre) {
			return true
		}
	}
	return false
}

// guard answers 403 to a request whose sender is not listed, before its
// body is read. A request another instance forwarded (-store etcd) is
// judged by the identity of its original sender, which the forward
// carries once authenticated (forwardGate), never by the instance's.
func (a *peerAllow) guard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := peer.FromRequest(r)
		if f := forwardedOf(r); f != nil {
			p = peer.Peer{}
			if f.authenticated {
				p = f.peer
			}
		}
		if _, ok := a.prefixes(p.ID()); !ok {
			a.refused.Add(1)
			// The request is not read: its connection is not reused.
			w.Header().Set("Connection", "close")
			http.Error(w, "this client certificate's identity is not in -peer-allow", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}
