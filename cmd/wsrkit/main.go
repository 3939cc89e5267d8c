// Command wsrkit is the WS-Reliability 1.1 SOAP gateway: it serves the
// reliable messaging endpoint, runs the demo and checks conformance
// scenarios.
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage: wsrkit <command> [flags]

commands:
  demo     run two gateways over a faulty link and check delivery (not built yet)
  serve    run the gateway (not built yet)
  conform  run conformance scenarios (not built yet)
`

// run executes one subcommand and returns the process exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stderr, usage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	switch args[0] {
	case "demo", "serve", "conform":
		fmt.Fprintf(stderr, "wsrkit %s: not built yet\n", args[0])
		return 1
	}
	fmt.Fprintf(stderr, "wsrkit: unknown command %q\n%s", args[0], usage)
	return 2
}
