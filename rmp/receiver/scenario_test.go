package receiver

import (
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

var printTraces = flag.Bool("print", false, "print scenario traces")

// scenario is a sequence of inputs and the expected trace of effects. Each
// runs once straight through and once per checkpoint with a restart there
// (Recover from the persisted records); every run must give the same trace.
type scenario struct {
	name string
	// ids are the D-/R-ids the scenario pins.
	ids  string
	cfg  Config
	run  func(h *harness)
	want string
}

func runScenario(t *testing.T, sc scenario, restartAt int) (*harness, string) {
	h := newHarness(t, sc.cfg)
	h.restartAt = restartAt
	sc.run(h)
	return h, strings.Join(h.log, "\n")
}

// scenarioTopics lists the scenario tables that stay in Go, one file a
// topic (scenario_TOPIC_test.go): what the text scenarios run in three
// store modes (conformance/testdata/recv_*.txt) cannot reach, the
// receiver's own refusals behind soap.Parse and a hand-off in flight.
var scenarioTopics = [][]scenario{
	pollScenarios, limitScenarios, operatorScenarios, runScenarios,
}

func TestScenarios(t *testing.T) {
	for _, sc := range slices.Concat(scenarioTopics...) {
		t.Run(sc.name, func(t *testing.T) {
			h, got := runScenario(t, sc, -1)
			if *printTraces {
				fmt.Printf("=== %s (%s)\n%s\n", sc.name, sc.ids, got)
			}
			want := strings.TrimSpace(sc.want)
			if got != want {
				t.Fatalf("%s\ngot:\n%s\nwant:\n%s", sc.ids, got, want)
			}
			for k := 0; k < h.cps; k++ {
				_, again := runScenario(t, sc, k)
				if again != got {
					t.Errorf("restart at checkpoint %d changed the outcome (R91, R93):\n%s\nwant:\n%s", k, again, got)
				}
			}
		})
	}
}

const (
	sec = time.Second
	hr  = time.Hour
)
