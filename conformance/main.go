package conformance

import (
	"flag"
	"fmt"
	"io"
)

// Main is `wsrkit conform [-rewrite] [-mode=all|memory|pebble|crash]
// DIR|FILE…`: it runs every scenario in every mode and returns 0 only when
// all pass. A failure prints the scenario, the command and a diff of
// expected vs actual. -rewrite writes the memory mode's output into the
// files instead, then checks the other modes against it.
func Main(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("conform", flag.ContinueOnError)
	fl.SetOutput(stderr)
	rewrite := fl.Bool("rewrite", false, "write the actual output into the scenario files")
	mode := fl.String("mode", "all", "store mode: all, memory, pebble or crash")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: wsrkit conform [-rewrite] [-mode=all|memory|pebble|crash] DIR|FILE…")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if fl.NArg() == 0 {
		fl.Usage()
		return 2
	}
	modes := allModes
	if *mode != "all" {
		modes = nil
		for _, m := range allModes {
			if m.String() == *mode {
				modes = []Mode{m}
			}
		}
		if modes == nil {
			fmt.Fprintf(stderr, "conform: unknown -mode %q\n", *mode)
			return 2
		}
	}
	files, err := scenarioFiles(fl.Args())
	if err != nil {
		fmt.Fprintf(stderr, "conform: %v\n", err)
		return 2
	}
	if len(files) == 0 {
		fmt.Fprintln(stderr, "conform: no scenario files (*.txt)")
		return 2
	}
	failed := 0
	for _, f := range files {
		if *rewrite {
			sc, err := readScenario(f)
			if err == nil {
				var actual []string
				actual, _, err = runScenario(sc, modes[0])
				if err == nil {
					err = sc.rewrite(actual)
				}
			}
			if err != nil {
				fmt.Fprintf(stderr, "conform: %s: %v\n", f, err)
				failed++
				continue
			}
		}
		ok := true
		for _, m := range modes {
			_, fails, err := RunFile(f, m)
			if err != nil {
				fmt.Fprintf(stderr, "conform: %s: %v\n", f, err)
				ok = false
				break
			}
			for _, fl := range fails {
				fmt.Fprint(stdout, fl.String())
				ok = false
			}
		}
		if ok {
			fmt.Fprintf(stdout, "ok   %s\n", f)
		} else {
			failed++
		}
	}
	fmt.Fprintf(stdout, "%d of %d scenarios passed in %d modes\n", len(files)-failed, len(files), len(modes))
	if failed > 0 {
		return 1
	}
	return 0
}
