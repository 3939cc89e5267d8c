// Command peerbench is the RabbitMQ side of scripts/peer-bench.sh (#22):
// the system a user might pick instead of wsrkit for durable, ordered,
// confirmed delivery of ≈1.5 KB messages between two applications, driven
// in the shapes of wsrkit's end-to-end benchmarks. It is its own module so
// that wsrkit does not depend on an AMQP client.
//
//	peerbench run -url amqp://guest:guest@127.0.0.1:5673/ -queue quorum -groups 64 -window 16 -time 5s
//	peerbench syncs -system quorum -shape g1w1 -short 300 -long 1500 short.strace long.strace
//	peerbench calls -system quorum -shape g64w16 -short 4000 -long 20000 broker.short broker.long client.short client.long
//	peerbench report -in raw.txt -out BENCHMARKS.md
//
// run prints one line in `go test -bench` format, so that the report reads
// RabbitMQ's figures and wsrkit's from the same file.
package main

import (
	"errors"
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: peerbench run|report|syncs|calls [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "run":
		err = runMain(os.Args[2:])
	case "report":
		err = reportMain(os.Args[2:])
	case "syncs":
		err = syncsMain(os.Args[2:])
	case "calls":
		err = callsMain(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q (run, report, syncs or calls)", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "peerbench:", err)
		var again *shortExceedsLong
		if errors.As(err, &again) {
			os.Exit(3)
		}
		os.Exit(1)
	}
}
