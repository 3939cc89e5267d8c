package rmp

import (
	"context"
	"fmt"
	"net/http/httptest"
	"regexp"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/rmp/outbound"
	"github.com/wsrkit/wsrkit/rmp/sender"
	"github.com/wsrkit/wsrkit/store"
	"github.com/wsrkit/wsrkit/store/memstore"
)

var batchMarker = regexp.MustCompile(`<p>m\d+</p>`)

// commitLog is a store that notes, for each payload marker, the number of
// the Apply that stored it, and a transport that notes every POST whose
// message was not stored before it left (R21).
type commitLog struct {
	store.Store
	next     outbound.Transport
	mu       sync.Mutex
	applies  int
	storedIn map[string]int
	early    []string
}

func (c *commitLog) Apply(batch []group.Mutation) error {
	if err := c.Store.Apply(batch); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.applies++
	for _, m := range batch {
		for _, mk := range batchMarker.FindAll(m.Value, -1) {
			if _, ok := c.storedIn[string(mk)]; !ok {
				c.storedIn[string(mk)] = c.applies
			}
		}
	}
	return nil
}

func (c *commitLog) Do(ctx context.Context, p outbound.Post) (outbound.PostResult, error) {
	c.mu.Lock()
	for _, mk := range batchMarker.FindAll(p.Body, -1) {
		if _, ok := c.storedIn[string(mk)]; !ok {
			c.early = append(c.early, string(mk))
		}
	}
	c.mu.Unlock()
	return c.next.Do(ctx, p)
}

// newCommitLog is a commitLog on a memstore and loopback HTTP.
func newCommitLog() *commitLog {
	return &commitLog{Store: memstore.New(memstore.Options{}), next: outbound.NewHTTPTransport(outbound.Config{Policy: &loopbackOnly}),
		storedIn: map[string]int{}}
}

// receiverServer is a receiver Node on a memstore behind an httptest
// server, both closed when t ends, and the collector it delivers to.
func receiverServer(t *testing.T) (*collector, *httptest.Server) {
	rc := newCollector()
	rn, err := Open(nodeConfig("r", memstore.New(memstore.Options{}), rc))
	require.NoError(t, err)
	rsrv := httptest.NewServer(rn)
	t.Cleanup(func() {
		rsrv.Close()
		rn.Close(context.Background())
	})
	return rc, rsrv
}

// SubmitBatch stores a batch over three groups in one commit before any of
// it is sent (R21), numbers each group's messages in order, and the
// receiver gets every message once, in order within its group (#22).
func TestNodeSubmitBatchOneCommitInOrder(t *testing.T) {
	rc, rsrv := receiverServer(t)

	sc := newCollector()
	log := newCommitLog()
	cfg := nodeConfig("s", log, sc)
	cfg.Transport = log
	sn, err := Open(cfg)
	require.NoError(t, err)
	defer sn.Close(context.Background())

	keys := []string{"a", "a", "b", "a", "", "b"}
	subs := make([]Submission, len(keys))
	for i, k := range keys {
		subs[i] = submission(k, i, false)
		subs[i].To = rsrv.URL
	}
	refs, err := sn.SubmitBatch(context.Background(), subs)
	require.NoError(t, err)
	require.Len(t, refs, len(subs))
	require.Equal(t, []uint64{0, 1, 0, 2, 0, 1}, []uint64{refs[0].Number, refs[1].Number, refs[2].Number, refs[3].Number, refs[4].Number, refs[5].Number})
	require.Equal(t, refs[0].GroupID, refs[3].GroupID)
	require.Equal(t, refs[2].GroupID, refs[5].GroupID)
	require.NotEqual(t, refs[0].GroupID, refs[2].GroupID)
	require.True(t, refs[4].Singleton)

	log.mu.Lock()
	first := log.storedIn["<p>m0</p>"]
	for i := range subs {
		require.Equal(t, first, log.storedIn[fmt.Sprintf("<p>m%d</p>", i)], "message %d stored by another commit", i)
	}
	log.mu.Unlock()
	require.NotZero(t, first)

	sc.waitFor(t, "six acknowledgements", func() bool { return len(sc.outcomes) == len(subs) })
	for i, ref := range refs {
		want := fmt.Sprintf("%d acknowledged", ref.Number)
		if ref.Singleton {
			want = "- acknowledged"
		}
		require.Equal(t, want, sc.outcomes[fmt.Sprintf("%s/%d", ref.GroupID, ref.Number)], "message %d", i)
	}
	rc.waitFor(t, "six deliveries", func() bool { return len(rc.delivered) == len(subs) })
	rc.mu.Lock()
	got := map[string][]string{}
	for _, m := range rc.delivered {
		for i, k := range keys {
			if m == fmt.Sprintf("m%d", i) {
				got[k] = append(got[k], m)
			}
		}
	}
	rc.mu.Unlock()
	require.Equal(t, map[string][]string{"a": {"m0", "m1", "m3"}, "b": {"m2", "m5"}, "": {"m4"}}, got)
	log.mu.Lock()
	defer log.mu.Unlock()
	require.Empty(t, log.early, "sent before stored (R21)")
}

// A batch is all or nothing: the first refused submission is named by its
// index (with the field at fault where the rule has one), and none of the
// batch was submitted: the next message of the group is still number 0.
func TestNodeSubmitBatchAllOrNothing(t *testing.T) {
	cfg := nodeConfig("s", memstore.New(memstore.Options{}), newCollector())
	cfg.Engine.Sender.Limits.MaxPendingPerGroup = 2
	n, err := Open(cfg)
	require.NoError(t, err)
	defer n.Close(context.Background())
	ctx := context.Background()
	at := func(key string, i int) Submission {
		s := submission(key, i, false)
		s.To = "http://127.0.0.1:1/rmp"
		return s
	}
	unordered := at("", 2)
	unordered.Flags.MessageOrder = true // R07: ordering needs a group
	offPolicy := at("k", 1)
	offPolicy.To = "http://10.1.2.3/rmp" // private: refused by the outbound policy (#18)
	clash := at("k", 1)
	clash.Flags.DuplicateElimination = false // not the group's parameters

	for _, c := range []struct {
		name  string
		batch []Submission
		index int
		is    error
		field string
	}{
		{"rule", []Submission{at("k", 0), at("k", 1), unordered}, 2, sender.ErrInvalidSubmission, "ordered"},
		{"destination", []Submission{at("k", 0), offPolicy}, 1, sender.ErrInvalidSubmission, ""},
		{"group parameters", []Submission{at("k", 0), clash}, 1, sender.ErrGroupParams, ""},
		{"bounds", []Submission{at("k", 0), at("k", 1), at("k", 2)}, 2, sender.ErrBoundsFull, ""},
	} {
		_, err := n.SubmitBatch(ctx, c.batch)
		var be *sender.BatchError
		require.ErrorAs(t, err, &be, c.name)
		require.Equal(t, c.index, be.Index, c.name)
		require.ErrorIs(t, err, c.is, c.name)
		var fe *sender.FieldError
		if c.field != "" {
			require.ErrorAs(t, err, &fe, c.name)
			require.Equal(t, c.field, fe.Field, c.name)
		}
	}
	ref, err := n.Submit(ctx, at("k", 9))
	require.NoError(t, err)
	require.Equal(t, uint64(0), ref.Number, "a refused batch submitted nothing")
}

// A batch that could not be one commit of the store is refused whole,
// naming the first submission beyond the bound; a smaller one is taken.
func TestNodeSubmitBatchFitsOneCommit(t *testing.T) {
	st := memstore.New(memstore.Options{Limits: store.Limits{MaxBatchMutations: 4 * 3 * batchMutationsPerMessage}})
	n, err := Open(nodeConfig("s", st, newCollector()))
	require.NoError(t, err)
	defer n.Close(context.Background())
	batch := make([]Submission, 4)
	for i := range batch {
		batch[i] = submission("k", i, false)
		batch[i].To = "http://127.0.0.1:1/rmp"
	}
	_, err = n.SubmitBatch(context.Background(), batch)
	var be *sender.BatchError
	require.ErrorAs(t, err, &be)
	require.Equal(t, 3, be.Index)
	require.ErrorIs(t, err, sender.ErrInvalidSubmission)
	refs, err := n.SubmitBatch(context.Background(), batch[:3])
	require.NoError(t, err)
	require.Equal(t, uint64(2), refs[2].Number, "the refused batch took no number")
}
