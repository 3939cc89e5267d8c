package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// parseFlags parses args into fs. -h prints the flags to stderr (status
// 0); a bad flag or value prints one line naming it, with a pointer to -h
// (status 2). ok is true when the command should run.
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) (status int, ok bool) {
	fs.SetOutput(io.Discard) // the flag package would print the whole usage on any error
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.SetOutput(stderr)
	switch {
	case err == nil:
		return 0, true
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintf(stderr, "usage of %s:\n", fs.Name())
		fs.PrintDefaults()
		return 0, false
	}
	fmt.Fprintf(stderr, "%s: %v (%q lists the flags)\n", fs.Name(), err, fs.Name()+" -h")
	return 2, false
}
