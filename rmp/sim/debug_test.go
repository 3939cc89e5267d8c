package sim

import (
	"os"
	"strings"
	"testing"

	"github.com/wsrkit/wsrkit/rmp"
)

func TestDebugCallbacks(t *testing.T) {
	g := os.Getenv("SIMDBG")
	if g == "" {
		t.Skip()
	}
	debugPost = func(wd *world, from *node, o rmp.Outbound, fate string) {
		if strings.Contains(string(o.Post.Body), g) && o.Ref.Kind != rmp.OutMessage {
			t.Logf("+%v %s %v %s: %s", wd.now.Sub(epoch), from.name, o.Ref.Kind, fate, o.Post.Body)
		}
	}
	debugAnswer = func(wd *world, n *node, e *event) {
		if e.ref.Kind == rmp.OutCallback {
			t.Logf("+%v %s callback result err=%v status=%d epoch ok=%v", wd.now.Sub(epoch), n.name, e.err, e.res.Status, e.epoch == n.epoch)
		}
	}
	res := Run(26, Options{})
	t.Log(len(res.Violations))
}
