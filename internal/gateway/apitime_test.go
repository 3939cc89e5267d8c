package gateway

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/wsrkit/wsrkit/rmp/admin"
)

func TestAPITimesStayRFC3339(t *testing.T) {
	// #18 item 9: a deadline past year 9999 (a far groupMaxIdle before
	// -max-lifetime refused it) prints as the last RFC 3339 instant.
	far := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(20000, 0, 0)
	j := groupJSON(admin.GroupView{NextDeadline: far})
	require.Equal(t, "9999-12-31T23:59:59.999999999Z", *j.NextDeadline)
	for _, tt := range []time.Time{far, time.Date(-5, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2030, 1, 2, 3, 4, 5, 6, time.FixedZone("x", 3600))} {
		s := apiTime(tt)
		_, err := time.Parse(time.RFC3339Nano, s)
		require.NoError(t, err, s)
	}
	require.Equal(t, "2030-01-02T02:04:05.000000006Z", apiTime(time.Date(2030, 1, 2, 3, 4, 5, 6, time.FixedZone("x", 3600))))
}
