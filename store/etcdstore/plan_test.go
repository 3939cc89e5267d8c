package etcdstore

import (
	"fmt"
	"strings"
	"testing"
)

// render lists ops as "del lo..hi", "del k" and "put k=v".
func render(p *plan) string {
	var out []string
	for _, op := range p.ops() {
		switch {
		case op.IsPut():
			out = append(out, fmt.Sprintf("put %s=%s", op.KeyBytes(), op.ValueBytes()))
		case len(op.RangeBytes()) > 0:
			out = append(out, fmt.Sprintf("del %q..%q", op.KeyBytes(), op.RangeBytes()))
		default:
			out = append(out, fmt.Sprintf("del %s", op.KeyBytes()))
		}
	}
	return strings.Join(out, "; ")
}

// TestPlanNetEffect pins the folding that keeps etcd from refusing a batch
// as "duplicate key": one operation per key, and range deletions cut around
// the keys put after them.
func TestPlanNetEffect(t *testing.T) {
	cases := []struct {
		name string
		do   func(p *plan)
		want string
	}{
		{"last write wins", func(p *plan) {
			p.Set([]byte("a"), []byte("1"))
			p.Delete([]byte("a"))
			p.Set([]byte("a"), []byte("2"))
			p.Set([]byte("b"), []byte("1"))
			p.Delete([]byte("b"))
		}, "put a=2; del b"},
		{"range drops earlier ops", func(p *plan) {
			p.Set([]byte("b"), []byte("1"))
			p.Delete([]byte("c"))
			p.DeleteRange([]byte("a"), []byte("d"))
			p.Set([]byte("z"), []byte("1"))
		}, `del "a".."d"; put z=1`},
		{"put after range cuts it", func(p *plan) {
			p.DeleteRange([]byte("a"), []byte("d"))
			p.Set([]byte("b"), []byte("1"))
			p.Set([]byte("a"), []byte("0"))
			p.Delete([]byte("c"))
		}, `del "a\x00".."b"; del "b\x00".."d"; put a=0; put b=1`},
		{"delete inside a range is dropped", func(p *plan) {
			p.DeleteRange([]byte("a"), []byte("d"))
			p.Delete([]byte("b"))
			p.Delete([]byte("x"))
		}, `del "a".."d"; del x`},
	}
	for _, c := range cases {
		var p plan
		c.do(&p)
		if got := render(&p); got != c.want {
			t.Errorf("%s: ops %s; want %s", c.name, got, c.want)
		}
	}
}
