package main

import (
	"io"

	"github.com/wsrkit/wsrkit/conformance"
)

// conform runs `wsrkit conform`: the conformance package's scenario runner.
func conform(args []string, stdout, stderr io.Writer) int {
	return conformance.Main(args, stdout, stderr)
}
