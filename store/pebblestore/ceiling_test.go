package pebblestore_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsrkit/wsrkit/store"
	"github.com/wsrkit/wsrkit/store/pebblestore"
)

func TestRawSyncSetWritesAndRefusesAfterClose(t *testing.T) {
	s, err := pebblestore.NewMemFS().Open("db", pebblestore.Options{})
	require.NoError(t, err)
	require.NoError(t, s.RawSyncSet([]byte("ceiling/1"), []byte("payload")))
	v, closer, err := s.DB().Get([]byte("ceiling/1"))
	require.NoError(t, err)
	require.Equal(t, "payload", string(v))
	require.NoError(t, closer.Close())
	require.NoError(t, s.Close())
	require.ErrorIs(t, s.RawSyncSet([]byte("ceiling/2"), nil), store.ErrClosed)
}
