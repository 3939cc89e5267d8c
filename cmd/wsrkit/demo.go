package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wsrkit/wsrkit/faults"
	"github.com/wsrkit/wsrkit/internal/faultnet"
	"github.com/wsrkit/wsrkit/internal/gateway"
	"github.com/wsrkit/wsrkit/rmp/admin"
)

// demoFlags are the knobs of `wsrkit demo`.
type demoFlags struct {
	messages  int
	groupSize int
	loss      float64
	seed      uint64
	timeout   time.Duration
	keep      bool
}

// demo runs two gateways over a faulty link and checks what came through.
func demo(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("wsrkit demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f demoFlags
	fs.IntVar(&f.messages, "messages", 3000, "messages to submit")
	fs.IntVar(&f.groupSize, "group-size", 50, "messages per ordered exactly-once group")
	fs.Float64Var(&f.loss, "loss", 0.1, "probability that the faulty link drops a request, and that it drops a response")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the faulty link and of the message mix")
	fs.DurationVar(&f.timeout, "timeout", 55*time.Second, "give up waiting for outcomes after this long")
	fs.BoolVar(&f.keep, "keep", false, "keep the temporary data directories")
	if status, ok := parseFlags(fs, args, stderr); !ok {
		return status
	}
	switch {
	case f.messages < 1:
		fmt.Fprintln(stderr, "wsrkit demo: -messages must be at least 1")
		return 2
	case f.groupSize < 1:
		fmt.Fprintln(stderr, "wsrkit demo: -group-size must be at least 1")
		return 2
	case f.loss < 0 || f.loss >= 1:
		fmt.Fprintln(stderr, "wsrkit demo: -loss must be in [0, 1)")
		return 2
	}
	defer startHeapFloor(defaultHeapFloor)() // as serve does
	ok, err := runDemo(f, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "wsrkit demo: %v\n", err)
		return 1
	}
	if !ok {
		return 1
	}
	return 0
}

// collector is the demo's consumer (-deliver) and producer (-notify)
// endpoint: it records every delivery and outcome.
type collector struct {
	mu         sync.Mutex
	deliveries map[string][]uint64 // group id → numbers in delivery order
	delivered  map[string]int      // "group/number" → times delivered
	outcomes   map[string][]gateway.OutcomeJSON
	changed    chan struct{}
}

func newCollector() *collector {
	return &collector{
		deliveries: map[string][]uint64{}, delivered: map[string]int{},
		outcomes: map[string][]gateway.OutcomeJSON{}, changed: make(chan struct{}, 1),
	}
}

func (c *collector) poke() {
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	defer c.poke()
	switch r.URL.Path {
	case "/deliver":
		gid := r.Header.Get(gateway.HeaderGroupID)
		key := gid + "/s"
		if n := r.Header.Get(gateway.HeaderSequenceNumber); n != "" {
			num, err := strconv.ParseUint(n, 10, 64)
			if err != nil {
				http.Error(w, "bad sequence number", http.StatusBadRequest)
				return
			}
			c.deliveries[gid] = append(c.deliveries[gid], num)
			key = gid + "/" + n
		}
		c.delivered[key]++
	case "/notify":
		var o gateway.OutcomeJSON
		if err := json.Unmarshal(body, &o); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		c.outcomes[o.ID] = append(c.outcomes[o.ID], o)
	default:
		http.NotFound(w, r)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// serveOn serves h on a fresh loopback listener and returns its URL.
func serveOn(h http.Handler) (string, *http.Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), srv, nil
}

// demoConfig is a gateway tuned for a loopback demo: fast retries.
func demoConfig(dir string) gateway.Config {
	c := gateway.DefaultConfig()
	c.Listen = "127.0.0.1:0"
	c.DataDir = dir
	c.RetryInterval = 400 * time.Millisecond
	c.RetryBackoff = 2
	c.RetryMaxInterval = 3 * time.Second
	c.MaxRetries = 20
	c.PollInterval = 200 * time.Millisecond
	// Both gateways and their links are on loopback, which the default
	// outbound policy refuses (#18).
	c.AllowOutbound = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	return c
}

// planned is one message the demo submits.
type planned struct {
	req gateway.SubmitRequest
	id  string
}

func runDemo(f demoFlags, out io.Writer) (bool, error) {
	tmp, err := os.MkdirTemp("", "wsrkit-demo-")
	if err != nil {
		return false, err
	}
	if !f.keep {
		defer os.RemoveAll(tmp)
	}
	col := newCollector()
	colURL, colSrv, err := serveOn(col)
	if err != nil {
		return false, err
	}
	defer colSrv.Close()

	// Receiving gateway B, behind a faulty link.
	bcfg := demoConfig(tmp + "/receiver")
	bcfg.Deliver = colURL + "/deliver"
	b, err := gateway.Start(bcfg, gateway.Options{})
	if err != nil {
		return false, err
	}
	defer b.Shutdown(context.Background())
	link := faultnet.Config{DropRequest: f.loss, DropResponse: f.loss, Duplicate: f.loss / 2, MaxDelay: 20 * time.Millisecond}
	fwd := link
	fwd.Target, fwd.Seed = b.URL(), f.seed
	fwdProxy := faultnet.New(fwd)
	toB, fwdSrv, err := serveOn(fwdProxy)
	if err != nil {
		return false, err
	}
	defer fwdSrv.Close()
	// A black hole for messages that must expire.
	hole := faultnet.New(faultnet.Config{Target: b.URL(), DropRequest: 1, Seed: f.seed})
	holeURL, holeSrv, err := serveOn(hole)
	if err != nil {
		return false, err
	}
	defer holeSrv.Close()

	// Sending gateway A; callbacks reach it through a second faulty link.
	backLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return false, err
	}
	acfg := demoConfig(tmp + "/sender")
	acfg.Notify = colURL + "/notify"
	acfg.PublicURL = "http://" + backLn.Addr().String()
	a, err := gateway.Start(acfg, gateway.Options{})
	if err != nil {
		backLn.Close()
		return false, err
	}
	defer a.Shutdown(context.Background())
	back := link
	back.Target, back.Seed = a.URL(), f.seed+1
	backSrv := &http.Server{Handler: faultnet.New(back), ReadHeaderTimeout: 10 * time.Second}
	go backSrv.Serve(backLn)
	defer backSrv.Close()

	plan := planDemo(f, toB+"/rmp", holeURL+"/rmp")
	fmt.Fprintf(out, "wsrkit demo: %d messages, loss %.0f%% each way, seed %d\n", len(plan.flat()), f.loss*100, f.seed)
	start := time.Now()
	if err := submitAll(a.URL(), plan); err != nil {
		return false, err
	}
	total := len(plan.flat())
	deadline := time.Now().Add(f.timeout)
	shown := -1
	for {
		col.mu.Lock()
		done := len(col.outcomes)
		col.mu.Unlock()
		if done != shown {
			progress(out, done, total)
			shown = done
		}
		if done >= total || time.Now().After(deadline) {
			break
		}
		select {
		case <-col.changed:
		case <-time.After(200 * time.Millisecond):
		}
		time.Sleep(100 * time.Millisecond)
	}
	fmt.Fprintln(out)
	// An ack means "stored" (D8); give the last deliveries a moment.
	waitDelivered(col, plan, 5*time.Second)
	var am, bm admin.Metrics
	if err := a.Node().Admin(context.Background(), func(e admin.Engine, _ time.Time) { am = e.Metrics() }); err != nil {
		return false, err
	}
	if err := b.Node().Admin(context.Background(), func(e admin.Engine, _ time.Time) { bm = e.Metrics() }); err != nil {
		return false, err
	}
	return summarize(out, col, plan, &am, &bm, time.Since(start)), nil
}

// demoPlan is the message mix: ordered exactly-once groups, singletons,
// and messages that go to a black hole with a short lifetime.
type demoPlan struct {
	groups   [][]*planned // each submitted in order
	singles  []*planned
	expiring []*planned
}

func (p *demoPlan) flat() []*planned {
	var all []*planned
	for _, g := range p.groups {
		all = append(all, g...)
	}
	all = append(all, p.singles...)
	return append(all, p.expiring...)
}

func planDemo(f demoFlags, to, hole string) *demoPlan {
	p := &demoPlan{}
	n := f.messages
	expiring := max(1, n/100)
	singles := max(1, n/20)
	if n < 10 {
		expiring, singles = min(1, n), 0
	}
	grouped := n - expiring - singles
	patterns := []string{"Response", "Response", "Callback", "Poll"}
	for gi := 0; grouped > 0; gi++ {
		size := min(f.groupSize, grouped)
		grouped -= size
		var g []*planned
		for i := range size {
			g = append(g, &planned{req: gateway.SubmitRequest{
				To: &to, Group: fmt.Sprintf("demo-%d-%d", f.seed, gi), Last: i == size-1,
				Ordered: true, Ack: true, DupElim: true, ExpiresIn: "10m",
				ReplyPattern: patterns[gi%len(patterns)], SOAP: []string{"1.1", "1.2"}[gi%2],
				Body: body(fmt.Sprintf("group %d message %d", gi, i)),
			}})
		}
		p.groups = append(p.groups, g)
	}
	for i := range singles {
		p.singles = append(p.singles, &planned{req: gateway.SubmitRequest{
			To: &to, Ack: true, DupElim: true, ExpiresIn: "10m", Body: body(fmt.Sprintf("singleton %d", i)),
		}})
	}
	for i := range expiring {
		p.expiring = append(p.expiring, &planned{req: gateway.SubmitRequest{
			To: &hole, Ack: true, DupElim: true, ExpiresIn: "1500ms", Body: body(fmt.Sprintf("doomed %d", i)),
		}})
	}
	return p
}

func body(text string) *string {
	s := "<demo:note xmlns:demo=\"urn:wsrkit:demo\">" + text + "</demo:note>"
	return &s
}

// submitAll posts the plan to the sending gateway: each group in order on
// one goroutine, groups and singletons concurrently.
func submitAll(base string, p *demoPlan) error {
	client := &http.Client{Timeout: 30 * time.Second}
	work := make(chan []*planned)
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for batch := range work {
				for _, m := range batch {
					if err := submitOne(client, base, m); err != nil {
						select {
						case errs <- err:
						default:
						}
						return
					}
				}
			}
		}()
	}
	for _, g := range p.groups {
		work <- g
	}
	for _, m := range append(append([]*planned(nil), p.singles...), p.expiring...) {
		work <- []*planned{m}
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

func submitOne(client *http.Client, base string, m *planned) error {
	b, _ := json.Marshal(m.req)
	for attempt := 0; ; attempt++ {
		resp, err := client.Post(base+"/v1/messages", "application/json", bytes.NewReader(b))
		if err != nil {
			return err
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusAccepted:
			var a gateway.SubmitAnswer
			if err := json.Unmarshal(data, &a); err != nil {
				return err
			}
			m.id = a.ID
			return nil
		case resp.StatusCode == http.StatusServiceUnavailable && attempt < 100:
			time.Sleep(50 * time.Millisecond) // a bound is full: wait for acks
		default:
			return fmt.Errorf("submit: HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(data)))
		}
	}
}

func progress(w io.Writer, done, total int) {
	const width = 40
	filled := width * done / max(total, 1)
	fmt.Fprintf(w, "\r[%s%s] %d/%d outcomes", strings.Repeat("#", filled), strings.Repeat(".", width-filled), done, total)
}

// waitDelivered waits until every acknowledged message was delivered, or
// the timeout.
func waitDelivered(col *collector, p *demoPlan, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if len(undelivered(col, p)) == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// undelivered lists the messages neither delivered nor reported failed.
func undelivered(col *collector, p *demoPlan) []string {
	col.mu.Lock()
	defer col.mu.Unlock()
	var missing []string
	for _, m := range p.flat() {
		if failed(col.outcomes[m.id]) {
			continue
		}
		ref, err := gateway.ParseMessageID(m.id)
		if err != nil {
			missing = append(missing, m.id)
			continue
		}
		key := ref.GroupID + "/s"
		if !ref.Singleton {
			key = ref.GroupID + "/" + strconv.FormatUint(ref.Number, 10)
		}
		if col.delivered[key] == 0 {
			missing = append(missing, key)
		}
	}
	return missing
}

func failed(os []gateway.OutcomeJSON) bool {
	return len(os) > 0 && os[len(os)-1].Outcome == "failed"
}

// summarize prints the table and reports whether every check holds.
func summarize(w io.Writer, col *collector, p *demoPlan, am, bm *admin.Metrics, took time.Duration) bool {
	col.mu.Lock()
	inOrder := true
	for _, nums := range col.deliveries {
		for i := 1; i < len(nums); i++ {
			if nums[i] <= nums[i-1] {
				inOrder = false
			}
		}
	}
	once := true
	delivered := 0
	for _, n := range col.delivered {
		delivered += n
		if n > 1 {
			once = false
		}
	}
	byReason := map[string]int{}
	for _, os := range col.outcomes {
		o := os[len(os)-1]
		label := o.Outcome
		if o.Reason != "" {
			label += " (" + o.Reason + ")"
		}
		byReason[label]++
	}
	reported := len(col.outcomes)
	col.mu.Unlock()
	missing := undelivered(col, p)
	total := len(p.flat())

	row := func(k string, v any) { fmt.Fprintf(w, "  %-44s %v\n", k, v) }
	fmt.Fprintf(w, "\nsummary (%.1fs)\n", took.Seconds())
	row("submitted", total)
	row("delivered", delivered)
	row("duplicates suppressed", bm.Duplicates)
	row("retries", am.Retries)
	var codes []string
	for _, c := range faults.All() {
		if n := bm.FaultsSent[c] + am.FaultsReceived[c]; n > 0 {
			codes = append(codes, fmt.Sprintf("%s=%d", c, n))
		}
	}
	if len(codes) == 0 {
		codes = []string{"none"}
	}
	row("faults by code", strings.Join(codes, " "))
	var reasons []string
	for r, n := range byReason {
		reasons = append(reasons, fmt.Sprintf("%s=%d", r, n))
	}
	sort.Strings(reasons)
	row("outcomes by reason", strings.Join(reasons, " "))
	row("outcomes reported", fmt.Sprintf("%d/%d", reported, total))
	check := func(name string, ok bool) {
		mark := "PASS"
		if !ok {
			mark = "FAIL"
		}
		row("check: "+name, mark)
	}
	allAccounted := len(missing) == 0
	check("every delivered group in order", inOrder)
	check("nothing delivered twice", once)
	check("every message delivered or reported failed", allAccounted)
	if !allAccounted {
		fmt.Fprintf(w, "  missing (first few): %v\n", missing[:min(5, len(missing))])
	}
	return inOrder && once && allAccounted
}
