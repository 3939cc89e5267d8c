package gateway

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func postRaw(t *testing.T, url, body string, header ...string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, b
}

// The batch form of POST /v1/messages (#22): 202 with each message's id in
// the order given, the numbers of each group in order, and the receiving
// gateway's inbox gets them once each, in order within a group.
func TestSubmitBatchAcceptedInOrder(t *testing.T) {
	recv := startLocal(t, func(*Config) {})
	send := startSender(t)
	to := recv.URL() + "/rmp"
	entry := func(group string, i int) string {
		return fmt.Sprintf(`{"to":%q,"group":%q,"ordered":%v,"ack":true,"dupElim":true,"expiresIn":"1m","body":"<m>%d</m>"}`,
			to, group, group != "", i)
	}
	groups := []string{"a", "b", "a", "", "a", "b"}
	parts := make([]string, len(groups))
	for i, gk := range groups {
		parts[i] = entry(gk, i)
	}
	st, body := postRaw(t, send.URL()+"/v1/messages", `{"messages":[`+strings.Join(parts, ",")+`]}`)
	require.Equal(t, http.StatusAccepted, st, string(body))
	var ans BatchSubmitAnswer
	require.NoError(t, json.Unmarshal(body, &ans))
	require.Len(t, ans.Messages, len(groups))
	numbers := make([]any, len(groups))
	for i, m := range ans.Messages {
		require.NotEmpty(t, m.ID)
		if m.Number != nil {
			numbers[i] = *m.Number
		}
	}
	require.Equal(t, []any{uint64(0), uint64(0), uint64(1), nil, uint64(2), uint64(1)}, numbers)
	require.Equal(t, ans.Messages[0].GroupID, ans.Messages[2].GroupID)
	require.NotEqual(t, ans.Messages[0].GroupID, ans.Messages[1].GroupID)

	// An ordered group's next message is delivered once the previous one
	// is taken from the inbox (R92): take each as it comes.
	byGroup := map[string][]string{}
	taken := 0
	deadline := time.Now().Add(20 * time.Second)
	for taken < len(groups) && time.Now().Before(deadline) {
		for _, m := range recv.inbox.list() {
			body := m.Body[strings.Index(m.Body, "<m>"):]
			byGroup[m.GroupID] = append(byGroup[m.GroupID], body[:strings.Index(body, "</m>")+4])
			req, err := http.NewRequest(http.MethodDelete, recv.URL()+"/v1/inbox/"+m.ID, nil)
			require.NoError(t, err)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			require.Less(t, resp.StatusCode, 300)
			taken++
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.Equal(t, []string{"<m>0</m>", "<m>2</m>", "<m>4</m>"}, byGroup[ans.Messages[0].GroupID])
	require.Equal(t, []string{"<m>1</m>", "<m>5</m>"}, byGroup[ans.Messages[1].GroupID])
	require.Equal(t, []string{"<m>3</m>"}, byGroup[ans.Messages[3].GroupID])
	for _, m := range ans.Messages {
		require.Eventually(t, func() bool {
			var ms MessageStatus
			return getJSON(send.URL()+"/v1/messages/"+m.ID, &ms) == 200 && ms.State == "acknowledged"
		}, 20*time.Second, 20*time.Millisecond, m.ID)
	}
}

// A batch with a bad entry is 400 naming the entry's index and field, and
// nothing of it was submitted: the next message of its group is number 0.
// The single form is unchanged beside it.
func TestSubmitBatchRefusedWhole(t *testing.T) {
	s := startLocal(t, func(c *Config) { c.MaxBatch = 3 })
	ok := `{"to":"http://127.0.0.1:1/rmp","group":"k","ack":true,"body":"<x/>"}`
	for _, c := range []struct {
		name, body string
		index      *int
		field      string
		header     []string
	}{
		{"no body", `{"messages":[` + ok + `,{"to":"http://127.0.0.1:1/rmp","group":"k","ack":true}]}`, ptr(1), "body", nil},
		{"ordered singleton", `{"messages":[` + ok + `,` + ok + `,{"to":"http://127.0.0.1:1/rmp","ordered":true,"body":"<x/>"}]}`, ptr(2), "ordered", nil},
		{"bad type", `{"messages":[` + ok + `,{"to":"http://127.0.0.1:1/rmp","ack":"yes","body":"<x/>"}]}`, ptr(1), "ack", nil},
		{"not an object", `{"messages":[` + ok + `,42]}`, ptr(1), "", nil},
		{"group parameters", `{"messages":[` + ok + `,{"to":"http://127.0.0.1:1/rmp","group":"k","ack":false,"body":"<x/>"}]}`, ptr(1), "group", nil},
		{"too many", `{"messages":[` + strings.Repeat(ok+",", 3) + ok + `]}`, nil, "messages", nil},
		{"empty", `{"messages":[]}`, nil, "messages", nil},
		{"not an array", `{"messages":{"to":"x"}}`, nil, "messages", nil},
		{"both forms", `{"to":"http://127.0.0.1:1/rmp","body":"<x/>","messages":[` + ok + `]}`, nil, "messages", nil},
		{"idempotency key", `{"messages":[` + ok + `]}`, nil, "", []string{"Idempotency-Key", "k1"}},
	} {
		st, body := postRaw(t, s.URL()+"/v1/messages", c.body, c.header...)
		require.Equal(t, http.StatusBadRequest, st, "%s: %s", c.name, body)
		var e batchErrorJSON
		require.NoError(t, json.Unmarshal(body, &e), c.name)
		require.Equal(t, c.index, e.Index, "%s: %s", c.name, body)
		require.Equal(t, c.field, e.Field, "%s: %s", c.name, body)
		if c.index != nil {
			require.True(t, strings.HasPrefix(e.Error, fmt.Sprintf("messages[%d]: ", *c.index)), "%s: %s", c.name, body)
		}
	}
	var a SubmitAnswer
	require.Equal(t, http.StatusAccepted, postJSON(t, s.URL()+"/v1/messages",
		map[string]any{"to": "http://127.0.0.1:1/rmp", "group": "k", "ack": true, "body": "<x/>"}, &a))
	require.NotNil(t, a.Number)
	require.Equal(t, uint64(0), *a.Number, "the refused batches submitted nothing")
}

func ptr(i int) *int { return &i }
