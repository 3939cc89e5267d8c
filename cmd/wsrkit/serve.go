package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/wsrkit/wsrkit/internal/gateway"
)

// shutdownGrace bounds a graceful shutdown after SIGINT/SIGTERM.
const shutdownGrace = 10 * time.Second

// serve runs `wsrkit serve` until SIGINT/SIGTERM or until stop is closed
// (tests); started, when set, receives the running server.
func serve(args []string, stderr io.Writer, started func(*gateway.Server) (stop <-chan struct{})) int {
	fs := flag.NewFlagSet("wsrkit serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := gateway.DefaultConfig()
	cfg.RegisterFlags(fs)
	logLevel := fs.String("log", "info", "log level: debug, info, warn or error")
	heapFloor := registerHeapFloor(fs)
	if status, ok := parseFlags(fs, args, stderr); !ok {
		return status
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "wsrkit serve: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		fmt.Fprintf(stderr, "wsrkit serve: invalid -log %q\n", *logLevel)
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	defer startHeapFloor(int64(*heapFloor))()
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	// SIGHUP re-reads the certificates, keys, CAs and the admin token. It
	// is caught before the listening line: a SIGHUP sent once that line is
	// out must never meet the default action, which ends the process.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	// With -store etcd Start joins the deployment and takes a first share
	// of the shards (bounded by -etcd-timeout and SIGINT/SIGTERM).
	srv, err := gateway.Start(cfg, gateway.Options{Logger: log, Context: ctx})
	if err != nil {
		fmt.Fprintf(stderr, "wsrkit serve: %v\n", err)
		return 1
	}
	attrs := []any{"url", srv.URL(), "data", cfg.DataDir, "store", cfg.Store, "fakeClock", cfg.FakeClock}
	if a := srv.AdminURL(); a != "" {
		attrs = append(attrs, "admin", a)
	}
	log.Info("wsrkit gateway listening", attrs...)
	var stop <-chan struct{}
	if started != nil {
		stop = started(srv)
	}
	status, lost := 0, "" // lost: why the node's state is no longer this process's to close cleanly
wait:
	for {
		select {
		case <-hup:
			srv.ReloadAndLog("SIGHUP")
		case <-ctx.Done():
			break wait
		case <-stop:
			break wait
		case err := <-srv.Done():
			fmt.Fprintf(stderr, "wsrkit serve: %v\n", err)
			status = 1
			break wait
		case err := <-srv.StoreFailed():
			// The disk takes writes again after a store failure: a
			// restart recovers what was committed.
			fmt.Fprintf(stderr, "wsrkit serve: stopping: %v\n", err)
			status, lost = 1, "a store failure"
			break wait
		case err := <-srv.Lost():
			// Another instance may own the state now: stop at once (D8 fencing).
			fmt.Fprintf(stderr, "wsrkit serve: stopping: %v\n", err)
			status, lost = 1, "losing the etcd lease or a shard claim"
			break wait
		}
	}
	sctx, scancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer scancel()
	if err := srv.Shutdown(sctx); err != nil {
		if lost != "" { // expected: the store refuses; the line above says why
			log.Warn("shutdown after "+lost, "err", err)
			return 1
		}
		fmt.Fprintf(stderr, "wsrkit serve: shutdown: %v\n", err)
		return 1
	}
	return status
}
