// Package sim is a deterministic simulation of two wsrkit engines talking
// WS-Reliability 1.1 over a faulty network, with virtual time, crashes,
// store faults, consumer failures and clock jumps, all drawn from one seed.
//
// Run builds a world from a seed: two rmp.Engine nodes over memstore or
// pebble-on-MemFS stores, a seeded event queue (min-heap on virtual time,
// ties broken by insertion order) and a workload of groups of every kind.
// Each event is applied the way a driver applies a Ready (rmp package doc);
// invariants are checked on every effect and at the end, and each violation
// names the seed and a short trace of the message it concerns, so that
// `go test ./rmp/sim -run Sim -sim.seed=S -sim.seeds=1 -v` replays it.
package sim
