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
	reserveDiskProcs()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage: wsrkit <command> [flags]

commands:
  demo     run two gateways over a faulty link and check delivery
  serve    run the gateway
  conform  run conformance scenarios

"wsrkit <command> -h" lists a command's flags.
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
	case "serve":
		return serve(args[1:], stderr, nil)
	case "demo":
		return demo(args[1:], stdout, stderr)
	case "conform":
		return conform(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "wsrkit: unknown command %q\n%s", args[0], usage)
	return 2
}
