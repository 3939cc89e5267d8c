package pebblestore

import "github.com/cockroachdb/pebble/v2"

// RawSyncSet writes value under key with one pebble Set committed with
// Sync, bypassing the store's key layout, checks and locks: the raw "pebble
// sync commit" ceiling that benchmarks outside this package (which may not
// import pebble) compare wsrkit with. wsrkit itself never calls it; keys it
// writes are outside the store's layout, so use it on a benchmark's own
// store only. Concurrent calls share WAL syncs (group commit).
func (s *Store) RawSyncSet(key, value []byte) (err error) {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.exit()
	defer s.guard(&err)
	return s.db.Set(key, value, pebble.Sync)
}
