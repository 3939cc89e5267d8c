package main

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// runConfig is one shape against one queue type.
type runConfig struct {
	url       string
	queue     string // x-queue-type: classic or quorum
	groups    int    // one durable queue, one producer, one consumer each
	window    int    // messages a producer may have published without a confirm
	prefetch  int    // the consumer's QoS
	size      int    // message body bytes
	dur       time.Duration
	count     int // fixed message count instead of dur (for the strace runs)
	brokerPID int
}

// result is what one run measured.
type result struct {
	msgs                   int
	elapsed                time.Duration
	p50, p99               time.Duration // publish → confirm
	clientCPU, brokerCPU   time.Duration
	systemCPU              time.Duration // every core's busy time (/proc/stat), the machine's other work included
	systemCPUKnown, pidSet bool
}

func runMain(args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	var c runConfig
	fs.StringVar(&c.url, "url", "amqp://guest:guest@127.0.0.1:5673/", "broker URL (loopback only)")
	fs.StringVar(&c.queue, "queue", "classic", "queue type: classic or quorum")
	fs.IntVar(&c.groups, "groups", 1, "ordered groups: one durable queue each")
	fs.IntVar(&c.window, "window", 1, "messages a producer may have without a publisher confirm")
	fs.IntVar(&c.prefetch, "prefetch", 64, "consumer prefetch (QoS)")
	fs.IntVar(&c.size, "size", 1500, "message body bytes")
	fs.DurationVar(&c.dur, "time", 3*time.Second, "how long the producers publish")
	fs.IntVar(&c.count, "count", 0, "publish exactly this many messages in all (overrides -time)")
	fs.IntVar(&c.brokerPID, "broker-pid", 0, "the broker's OS process, for its CPU time")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := c.check(); err != nil {
		return err
	}
	r, err := bench(c)
	if err != nil {
		return err
	}
	fmt.Println(r.line(c))
	return nil
}

func (c runConfig) check() error {
	switch {
	case c.queue != "classic" && c.queue != "quorum":
		return fmt.Errorf("-queue %q: classic or quorum", c.queue)
	case c.groups < 1 || c.groups > 1024:
		return fmt.Errorf("-groups %d: 1 to 1024", c.groups)
	case c.window < 1 || c.window > 1024:
		return fmt.Errorf("-window %d: 1 to 1024", c.window)
	case c.prefetch < 1:
		return fmt.Errorf("-prefetch %d: at least 1", c.prefetch)
	case c.size < 8 || c.size > 1<<20:
		return fmt.Errorf("-size %d: 8 B to 1 MiB", c.size)
	case c.count < 0 || (c.count == 0 && c.dur <= 0):
		return errors.New("-count or -time must be positive")
	}
	return loopbackOnly(c.url)
}

// loopbackOnly refuses a broker anywhere but this machine's loopback.
func loopbackOnly(raw string) error {
	u, err := amqp.ParseURI(raw)
	if err != nil {
		return fmt.Errorf("-url: %w", err)
	}
	if u.Host != "127.0.0.1" && u.Host != "::1" && u.Host != "localhost" {
		return fmt.Errorf("-url host %q: loopback only", u.Host)
	}
	return nil
}

// line is the result in `go test -bench` format.
func (r result) line(c runConfig) string {
	n := float64(r.msgs)
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
	var b strings.Builder
	fmt.Fprintf(&b, "BenchmarkRabbitMQ/queue=%s/groups=%d/window=%d \t%d\t%.0f ns/op\t%.0f msg/s\t%.0f p50-µs\t%.0f p99-µs",
		c.queue, c.groups, c.window, r.msgs, float64(r.elapsed.Nanoseconds())/n, n/r.elapsed.Seconds(), us(r.p50), us(r.p99))
	fmt.Fprintf(&b, "\t%.1f client-cpu-µs/msg", us(r.clientCPU)/n)
	if r.pidSet {
		fmt.Fprintf(&b, "\t%.1f broker-cpu-µs/msg\t%.1f cpu-µs/msg", us(r.brokerCPU)/n, us(r.brokerCPU+r.clientCPU)/n)
	}
	if r.systemCPUKnown {
		fmt.Fprintf(&b, "\t%.1f system-cpu-µs/msg", us(r.systemCPU)/n)
	}
	return b.String()
}

// bench declares the queues afresh, starts a consumer per queue, publishes
// in the shape asked for, and stops the clock once every message was
// consumed, in order, and acknowledged.
func bench(c runConfig) (result, error) {
	gs := make([]*groupRun, c.groups)
	defer func() {
		for _, g := range gs {
			if g != nil {
				g.close()
			}
		}
	}()
	for i := range gs {
		g, err := openGroup(c, fmt.Sprintf("peerbench.%s.g%d", c.queue, i))
		if err != nil {
			return result{}, err
		}
		gs[i] = g
	}
	var next atomic.Int64
	deadline := time.Now().Add(c.dur)
	more := func() bool {
		if c.count > 0 {
			return next.Add(1) <= int64(c.count)
		}
		return time.Now().Before(deadline)
	}
	var lat latencies
	cpu0 := processCPU()
	bcpu0, pidErr := brokerCPU(c.brokerPID)
	sys0, sysOK := systemBusy()
	start := time.Now()
	errs := make(chan error, c.groups)
	var wg sync.WaitGroup
	for _, g := range gs {
		wg.Go(func() {
			if err := g.publish(c, more, &lat); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := errors.Join(slices.Collect(chanValues(errs))...); err != nil {
		return result{}, err
	}
	total := 0
	for _, g := range gs {
		total += g.published
	}
	if err := waitConsumed(gs, total); err != nil {
		return result{}, err
	}
	r := result{msgs: total, elapsed: time.Since(start), clientCPU: processCPU() - cpu0}
	if total == 0 {
		return result{}, errors.New("no message published")
	}
	if b1, err := brokerCPU(c.brokerPID); err == nil && pidErr == nil {
		r.brokerCPU, r.pidSet = b1-bcpu0, true
	}
	if sys1, ok := systemBusy(); ok && sysOK {
		r.systemCPU, r.systemCPUKnown = sys1-sys0, true
	}
	r.p50, r.p99 = lat.percentile(50), lat.percentile(99)
	return r, nil
}

func chanValues[T any](ch <-chan T) func(func(T) bool) {
	return func(yield func(T) bool) {
		for v := range ch {
			if !yield(v) {
				return
			}
		}
	}
}

// waitConsumed waits until the consumers took every published message,
// failing on the first out-of-order delivery.
func waitConsumed(gs []*groupRun, total int) error {
	limit := time.Now().Add(2 * time.Minute)
	for {
		got := 0
		for _, g := range gs {
			if err := g.failed(); err != nil {
				return err
			}
			got += int(g.consumed.Load())
		}
		if got >= total {
			return nil
		}
		if time.Now().After(limit) {
			return fmt.Errorf("%d of %d messages consumed after 2 min", got, total)
		}
		time.Sleep(time.Millisecond)
	}
}

// groupRun is one ordered group: a durable queue, a producer on its own
// connection (confirm mode) and a consumer on another (manual acks).
type groupRun struct {
	queue     string
	pubConn   *amqp.Connection
	subConn   *amqp.Connection
	pub       *amqp.Channel
	published int
	consumed  atomic.Int64
	mu        sync.Mutex
	bad       error
	done      chan struct{}
}

func openGroup(c runConfig, queue string) (*groupRun, error) {
	g := &groupRun{queue: queue, done: make(chan struct{})}
	var err error
	if g.pubConn, err = amqp.Dial(c.url); err != nil {
		return nil, err
	}
	if g.subConn, err = amqp.Dial(c.url); err != nil {
		g.pubConn.Close()
		return nil, err
	}
	if err := g.declare(c.queue); err != nil {
		g.close()
		return nil, err
	}
	if g.pub, err = g.pubConn.Channel(); err == nil {
		err = g.pub.Confirm(false)
	}
	if err != nil {
		g.close()
		return nil, err
	}
	sub, err := g.subConn.Channel()
	if err == nil {
		err = sub.Qos(c.prefetch, 0, false)
	}
	var deliveries <-chan amqp.Delivery
	if err == nil {
		deliveries, err = sub.Consume(queue, "", false, false, false, false, nil)
	}
	if err != nil {
		g.close()
		return nil, err
	}
	go g.consume(deliveries)
	return g, nil
}

// declare deletes what an earlier run left and declares the queue durable.
func (g *groupRun) declare(kind string) error {
	ch, err := g.pubConn.Channel()
	if err != nil {
		return err
	}
	defer ch.Close()
	if _, err := ch.QueueDelete(g.queue, false, false, false); err != nil {
		return fmt.Errorf("delete %s: %w", g.queue, err)
	}
	_, err = ch.QueueDeclare(g.queue, true, false, false, false, amqp.Table{"x-queue-type": kind})
	return err
}

func (g *groupRun) fail(err error) {
	g.mu.Lock()
	if g.bad == nil {
		g.bad = err
	}
	g.mu.Unlock()
}

func (g *groupRun) failed() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.bad
}

// consume acknowledges every delivery, one at a time, checking that the
// group's numbers arrive in order and once.
func (g *groupRun) consume(deliveries <-chan amqp.Delivery) {
	defer close(g.done)
	var want uint64
	for d := range deliveries {
		if len(d.Body) < 8 || d.Redelivered {
			g.fail(fmt.Errorf("%s: bad or redelivered message (%d B, redelivered %v)", g.queue, len(d.Body), d.Redelivered))
			return
		}
		if n := binary.BigEndian.Uint64(d.Body); n != want {
			g.fail(fmt.Errorf("%s: message %d arrived where %d was next", g.queue, n, want))
			return
		}
		want++
		if err := d.Ack(false); err != nil {
			g.fail(err)
			return
		}
		g.consumed.Add(1)
	}
}

type inflight struct {
	dc *amqp.DeferredConfirmation
	t0 time.Time
}

// publish sends persistent messages numbered from 0 while more says so,
// keeping at most c.window without a confirm, then waits for the rest.
func (g *groupRun) publish(c runConfig, more func() bool, lat *latencies) error {
	body := make([]byte, c.size)
	for i := 8; i < len(body); i++ {
		body[i] = 'a' + byte(i%26)
	}
	var win []inflight
	wait := func() error {
		f := win[0]
		win = win[1:]
		ok, err := f.dc.WaitContext(context.Background())
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%s: message %d nacked", g.queue, f.dc.DeliveryTag-1)
		}
		lat.add(time.Since(f.t0))
		return nil
	}
	for n := uint64(0); more(); n++ {
		if len(win) == c.window {
			if err := wait(); err != nil {
				return err
			}
		}
		binary.BigEndian.PutUint64(body, n)
		t0 := time.Now()
		dc, err := g.pub.PublishWithDeferredConfirm("", g.queue, false, false, amqp.Publishing{
			DeliveryMode: amqp.Persistent, ContentType: "application/octet-stream", Body: body,
		})
		if err != nil {
			return fmt.Errorf("%s: publish %d: %w", g.queue, n, err)
		}
		win = append(win, inflight{dc, t0})
		g.published++
	}
	for len(win) > 0 {
		if err := wait(); err != nil {
			return err
		}
	}
	return nil
}

func (g *groupRun) close() {
	if g.subConn != nil {
		g.subConn.Close()
		<-g.done
	}
	if g.pubConn != nil {
		if ch, err := g.pubConn.Channel(); err == nil {
			ch.QueueDelete(g.queue, false, false, false)
		}
		g.pubConn.Close()
	}
}

// latencies collects durations from many goroutines.
type latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *latencies) add(d time.Duration) {
	l.mu.Lock()
	l.d = append(l.d, d)
	l.mu.Unlock()
}

func (l *latencies) percentile(p int) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.d) == 0 {
		return 0
	}
	slices.Sort(l.d)
	return l.d[min(len(l.d)-1, len(l.d)*p/100)]
}

// processCPU is this process's user+system time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// userHZ is the unit of /proc's CPU times on Linux.
const userHZ = 100

// brokerCPU is the user+system time of process pid (every thread) from
// /proc/<pid>/stat.
func brokerCPU(pid int) (time.Duration, error) {
	if pid <= 0 {
		return 0, errors.New("no broker pid")
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name may hold spaces: the fields after it start past ')'.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, errors.New("odd /proc stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, errors.New("short /proc stat")
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, errors.New("odd /proc stat times")
	}
	return time.Duration(ut+st) * time.Second / userHZ, nil
}

// systemBusy is the machine's non-idle CPU time over all cores.
func systemBusy() (time.Duration, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 8 || f[0] != "cpu" {
		return 0, false
	}
	var busy int64
	for i, v := range f[1:] {
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		if i >= 7 { // guest times are already in user
			break
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, false
		}
		busy += n
	}
	return time.Duration(busy) * time.Second / userHZ, true
}
