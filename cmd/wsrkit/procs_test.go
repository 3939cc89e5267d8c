package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestProcsWithDiskAddsRoomUnlessTheOperatorChose(t *testing.T) {
	n, changed := procsWithDisk("", 2)
	require.True(t, changed)
	require.Equal(t, 2+diskProcs, n)
	n, changed = procsWithDisk("3", 8)
	require.False(t, changed, "GOMAXPROCS set by the operator is kept")
	require.Equal(t, 8, n)
}

// A process that calls reserveDiskProcs, as main does, runs with the
// extra Ps, and with exactly the operator's GOMAXPROCS when it is set.
func TestReserveDiskProcsInAFreshProcess(t *testing.T) {
	if os.Getenv("WSRKIT_PRINT_PROCS") == "1" {
		before := runtime.GOMAXPROCS(0)
		reserveDiskProcs()
		fmt.Printf("procs %d %d\n", before, runtime.GOMAXPROCS(0))
		os.Exit(0)
	}
	run := func(env ...string) (before, after int) {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestReserveDiskProcsInAFreshProcess$")
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "GOMAXPROCS=") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(cmd.Env, append(env, "WSRKIT_PRINT_PROCS=1")...)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
		i := strings.Index(string(out), "procs ")
		require.GreaterOrEqual(t, i, 0, string(out))
		_, err = fmt.Sscanf(string(out[i:]), "procs %d %d", &before, &after)
		require.NoError(t, err, string(out))
		return before, after
	}
	before, after := run()
	require.Equal(t, before+diskProcs, after)
	_, after = run("GOMAXPROCS=3")
	require.Equal(t, 3, after)
}
