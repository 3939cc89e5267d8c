//go:build race

package main

// raceDetector reports whether this test binary, and so every gateway
// process it starts (process_test.go runs os.Executable), is built with
// -race.
const raceDetector = true
