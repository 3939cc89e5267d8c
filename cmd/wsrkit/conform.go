package main

import (
	"fmt"
	"io"
)

// conform runs `wsrkit conform`. The conformance package's Main is not
// there yet; until it is, the command says so and fails.
func conform(_ []string, _, stderr io.Writer) int {
	fmt.Fprintln(stderr, "wsrkit conform: not built yet")
	return 1
}
