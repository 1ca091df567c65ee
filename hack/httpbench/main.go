// Command httpbench measures seedwarden's webhook server over HTTPS against a
// baseline built in the same run, and prints Markdown tables for
// BENCHMARKS.md (issue 5, "HTTP").
//
//	go run ./hack/httpbench [-duration 10s] [-warmup 1s] [-concurrency 64] [-rate 0]
//	                        [-seeds 1000] [-shoots 10000] [-reservation-ttl 5s]
//	                        [-webhook bin/webhook] [-rounds 1] [-keep]
//	                        [-size] [-size-bytes 102400] [-profile] [-out bin/httpbench]
//
// (make bench-http BENCH_HTTP_ARGS="..." runs it too.)
//
// In a temporary directory it makes TLS material (hack/devcerts/certgen), a
// landscape (landscapegen.Landscape), a configuration and a realistic 8-10 KB
// Shoot. It starts two servers as processes on loopback: the real one
// (`webhook serve --landscape ... --config ...`, built into the temporary
// directory unless -webhook names a binary) and the baseline, this program's
// hidden `baseline-server` subcommand: a controller-runtime webhook.Server with
// the same TLS settings whose handler allows everything without decoding the
// object. Then -concurrency workers, sharing one keep-alive HTTP/1.1
// transport, POST CREATE AdmissionReviews (a fresh UID and Shoot name each) to
// /mutate-shoots of the baseline, seedwarden, the baseline again (and
// seedwarden and the baseline once more per further -rounds), each run a 1 s
// warm-up and then -duration measured. Every answer is checked: 200, an
// AdmissionReview for the request's UID that allows, and from seedwarden a
// patch setting /spec/seedName. The Shoot is sent in each of landscapegen's
// regions in turn, so that placements spread over the landscape and the
// reservations (-reservation-ttl) never fill the seeds; unschedulable answers
// are counted (as errors) and reported.
//
// By default the load is a closed loop (each client sends again as soon as it
// is answered): the servers run at saturation, throughput is the figure to
// compare, and latency is mostly queueing. -rate R makes it an open loop of R
// requests per second on a fixed schedule, with latency counted from the
// scheduled send time: the latency figures to compare. The servers' CPU time
// per request (from /proc) is reported either way; on a machine shared with
// other work it is steadier than throughput.
//
// -size does the same for /validate-resource-size with a 100 KB ConfigMap
// (skipped if the server does not serve that path). -profile then runs
// seedwarden's /mutate-shoots handler and the baseline in this process (the
// server has no pprof endpoint) with CPU, allocation and mutex profiles
// written to -out, and prints the server side of them.
//
// Progress goes to stderr, the report to stdout.
package main

// Long file (over 450 lines): one developer tool's command (flags, runs,
// Markdown output), not shipped; kept in one place for reading.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/seedwarden/seedwarden/hack/devcerts/certgen"
)

type options struct {
	duration, warmup time.Duration
	concurrency      int
	seeds, shoots    int
	webhookBin       string
	reservationTTL   time.Duration
	rounds           int
	profile          bool
	out              string
	size             bool
	sizeBytes        int
	rate             float64
	keep             bool
}

func (o *options) load() load {
	return load{concurrency: o.concurrency, warmup: o.warmup, duration: o.duration, rate: o.rate}
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "baseline-server" {
		os.Exit(baselineServer(os.Args[2:]))
	}
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	o := &options{}
	fs := flag.NewFlagSet("httpbench", flag.ContinueOnError)
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "measured time per run")
	fs.DurationVar(&o.warmup, "warmup", time.Second, "unmeasured load before each run's window")
	fs.IntVar(&o.concurrency, "concurrency", 64, "concurrent clients (keep-alive connections)")
	fs.IntVar(&o.seeds, "seeds", 1000, "seeds in the landscape")
	fs.IntVar(&o.shoots, "shoots", 10000, "existing Shoots in the landscape")
	fs.StringVar(&o.webhookBin, "webhook", "", "seedwarden binary (default: go build ./cmd/webhook into the temporary directory)")
	fs.DurationVar(&o.reservationTTL, "reservation-ttl", 5*time.Second, "the server's reservationTTL: how long each placement holds a slot (keep TTL x req/s well under the landscape's free slots)")
	fs.IntVar(&o.rounds, "rounds", 1, "seedwarden runs, each followed by a baseline run (the first baseline run comes before them)")
	fs.BoolVar(&o.profile, "profile", false, "also profile seedwarden's handler and the baseline in this process (CPU, allocations, mutex)")
	fs.StringVar(&o.out, "out", "bin/httpbench", "directory for the -profile files")
	fs.BoolVar(&o.size, "size", false, "also benchmark /validate-resource-size with a ConfigMap of -size-bytes")
	fs.IntVar(&o.sizeBytes, "size-bytes", 100<<10, "size of the -size ConfigMap")
	fs.Float64Var(&o.rate, "rate", 0, "open loop: send this many requests per second in all, on a fixed schedule, and count latency from the scheduled time (0: closed loop, as fast as the server answers)")
	fs.BoolVar(&o.keep, "keep", false, "keep the temporary directory (certificates, landscape, configuration, server logs)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 || o.concurrency < 1 || o.concurrency > 4096 || o.duration <= 0 || o.warmup < 0 || o.rounds < 1 || o.seeds < 1 || o.rate < 0 {
		fmt.Fprintln(os.Stderr, "httpbench: bad usage (want -concurrency 1-4096, -duration > 0, -rounds >= 1, -seeds >= 1, no arguments)")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := bench(ctx, o, args); err != nil {
		fmt.Fprintf(os.Stderr, "httpbench: %v\n", err)
		return 1
	}
	return 0
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "httpbench: "+format+"\n", args...)
}

func bench(ctx context.Context, o *options, args []string) error {
	tmp, err := os.MkdirTemp("", "httpbench-")
	if err != nil {
		return err
	}
	if o.keep {
		progress("keeping %s", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}

	// Fixtures.
	certDir := filepath.Join(tmp, "certs")
	if err := certgen.Generate(certDir, certgen.DefaultHosts, time.Now()); err != nil {
		return fmt.Errorf("certificates: %w", err)
	}
	tlsCfg, err := clientTLS(filepath.Join(certDir, certgen.CAFile))
	if err != nil {
		return err
	}
	landscape := filepath.Join(tmp, "landscape.json")
	if err := writeLandscape(landscape, o.seeds, o.shoots); err != nil {
		return fmt.Errorf("landscape: %w", err)
	}
	shoots, err := shootTemplates()
	if err != nil {
		return err
	}
	var sizeTmpl []*template
	sizeLimit := ""
	if o.size {
		t, err := configMapTemplate(o.sizeBytes)
		if err != nil {
			return err
		}
		sizeTmpl = []*template{t}
		sizeLimit = "1Mi"
	}
	p, err := freePorts(4)
	if err != nil {
		return err
	}
	ours := ports{webhook: p[0], metrics: p[1], health: p[2]}
	baselinePort := p[3]
	cfgPath, err := writeFile(tmp, "config.yaml", configYAML(ours, certDir, o.reservationTTL, sizeLimit))
	if err != nil {
		return err
	}
	progress("fixtures in %s: Shoots of %s bytes in %d regions, AdmissionReviews of %s bytes, landscape %d seeds and %d Shoots", tmp, objectSizes(shoots), len(shoots), bodySizes(shoots), o.seeds, o.shoots)

	// Servers.
	bin := o.webhookBin
	if bin == "" {
		bin = filepath.Join(tmp, "webhook")
		progress("building %s", bin)
		if err := goBuild(ctx, bin); err != nil {
			return err
		}
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	oursProc, err := startProc("seedwarden", filepath.Join(tmp, "seedwarden.log"), bin, "serve", "--landscape", landscape, "--config", cfgPath)
	if err != nil {
		return err
	}
	defer oursProc.stop()
	baseProc, err := startProc("baseline", filepath.Join(tmp, "baseline.log"), self, "baseline-server", "-port", fmt.Sprint(baselinePort), "-cert-dir", certDir)
	if err != nil {
		return err
	}
	defer baseProc.stop()
	readyz := fmt.Sprintf("http://127.0.0.1:%d/readyz", ours.health)
	if err := oursProc.waitReady(ctx, 2*time.Minute, func() error { return httpOK(readyz, nil) }); err != nil {
		return err
	}
	if err := baseProc.waitReady(ctx, time.Minute, func() error {
		return httpOK(fmt.Sprintf("https://127.0.0.1:%d/", baselinePort), tlsCfg)
	}); err != nil {
		return err
	}
	progress("servers ready: seedwarden pid %d on :%d, baseline pid %d on :%d", oursProc.cmd.Process.Pid, ours.webhook, baseProc.cmd.Process.Pid, baselinePort)

	env := machine(args)
	oursURL := fmt.Sprintf("https://127.0.0.1:%d", ours.webhook)
	baseURL := fmt.Sprintf("https://127.0.0.1:%d", baselinePort)
	mutate := bench3(ctx, o, tlsCfg,
		target{server: "baseline", url: baseURL + mutateShootsPath + "?timeout=10s", tmpls: shoots},
		target{server: "seedwarden", url: oursURL + mutateShootsPath + "?timeout=10s", tmpls: shoots, placed: true},
		baseProc, oursProc)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	fmt.Println(env.header)
	printTable(os.Stdout, fmt.Sprintf("HTTP: %s, seedwarden vs. an empty controller-runtime webhook", mutateShootsPath), o, shoots, "Shoot", mutate, true)

	if o.size {
		url := oursURL + validateResourceSizePath + "?timeout=10s"
		switch served, err := probe(url, sizeTmpl[0], tlsCfg); {
		case err != nil:
			return err
		case !served:
			fmt.Printf("\n%s: not served by this seedwarden (404); resource-size benchmark skipped.\n", validateResourceSizePath)
		default:
			size := bench3(ctx, o, tlsCfg,
				target{server: "baseline", url: baseURL + validateResourceSizePath + "?timeout=10s", tmpls: sizeTmpl},
				target{server: "seedwarden", url: url, tmpls: sizeTmpl},
				baseProc, oursProc)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			printTable(os.Stdout, fmt.Sprintf("HTTP: %s, seedwarden vs. an empty controller-runtime webhook", validateResourceSizePath), o, sizeTmpl, "ConfigMap", size, false)
		}
	}

	if tail := unschedulableLogLines(oursProc.logPath); tail != "" {
		fmt.Printf("\nseedwarden logged Shoots it could not place:\n\n```\n%s\n```\n", tail)
	}
	oursProc.stop()
	baseProc.stop()

	if o.profile {
		return profile(ctx, o, cfgPath, landscape, certDir, shoots, tlsCfg)
	}
	return nil
}

// bench3 runs the baseline, seedwarden, the baseline, and then seedwarden
// and the baseline for each further round.
func bench3(ctx context.Context, o *options, tlsCfg *tls.Config, base, ours target, baseProc, oursProc *proc) []*result {
	seq := []struct {
		t target
		p *proc
	}{{base, baseProc}}
	for range o.rounds {
		seq = append(seq, struct {
			t target
			p *proc
		}{ours, oursProc}, struct {
			t target
			p *proc
		}{base, baseProc})
	}
	var out []*result
	for i, s := range seq {
		if ctx.Err() != nil {
			return out
		}
		progress("run %d/%d: %s %s, %d clients, %s + %s", i+1, len(seq), s.t.server, s.t.url, o.concurrency, o.warmup, o.duration)
		pid := s.p.cmd.Process.Pid
		r := runLoad(ctx, s.t, tlsCfg, o.load(), hooks{}, func() float64 { return procCPU(pid) })
		progress("  %d requests, %d errors, %.0f req/s, p50 %s, p99 %s", r.requests, r.errors, r.rps(), fmtDur(r.percentile(.5)), fmtDur(r.percentile(.99)))
		for _, e := range r.errSamples {
			progress("  error: %s", e)
		}
		out = append(out, r)
		// Let the server collect the run's garbage before the next one.
		time.Sleep(500 * time.Millisecond)
	}
	return out
}

// profile runs seedwarden's handler and the baseline in this process, each
// under the same load, with profiles.
func profile(ctx context.Context, o *options, cfgPath, landscape, certDir string, shoots []*template, tlsCfg *tls.Config) error {
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	p, err := freePorts(2)
	if err != nil {
		return err
	}
	logFile, err := os.Create(filepath.Join(o.out, "seedwarden-inprocess.log"))
	if err != nil {
		return err
	}
	defer logFile.Close()
	srv, err := inProcessServer(cfgPath, landscape, p[0], logFile)
	if err != nil {
		return err
	}
	fmt.Printf("\n### Profile: %s in process (%s warm-up, %s profiled, %d clients in the same process)\n", mutateShootsPath, o.warmup, o.duration, o.concurrency)
	fmt.Printf("\nThe load generator shares the process: CPU views keep only samples labelled %s=%s, allocation views only stacks under net/http.(*conn).serve. Files in %s.\n", labelSide, sideServer, o.out)

	oursURL := fmt.Sprintf("https://127.0.0.1:%d%s?timeout=10s", p[0], mutateShootsPath)
	baseURL := fmt.Sprintf("https://127.0.0.1:%d%s?timeout=10s", p[1], mutateShootsPath)
	runs := []struct {
		srv webhook.Server
		t   target
	}{
		{inProcessBaseline(p[1], certDir), target{server: "baseline", url: baseURL, tmpls: shoots}},
		{srv, target{server: "seedwarden", url: oursURL, tmpls: shoots, placed: true}},
	}
	for _, run := range runs {
		progress("profiling %s in process: %s + %s", run.t.server, o.warmup, o.duration)
		r, prof, err := profileRun(ctx, o, run.t.server, run.srv, run.t, tlsCfg, o.out)
		if err != nil {
			return err
		}
		fmt.Printf("\n#### %s in process: %d requests, %d errors, %.0f req/s, p50 %s, p99 %s\n", run.t.server, r.requests, r.errors, r.rps(), fmtDur(r.percentile(.5)), fmtDur(r.percentile(.99)))
		for _, e := range r.errSamples {
			fmt.Printf("\nerror: %s\n", e)
		}
		prof.report(os.Stdout, r.requests)
	}
	return nil
}

// clientTLS trusts the generated CA; HTTP/1.1 only.
func clientTLS(caFile string) (*tls.Config, error) {
	caPEM, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("%s holds no certificate", caFile)
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}, nil
}

func freePorts(n int) ([]int, error) {
	var out []int
	var lns []net.Listener
	defer func() {
		for _, l := range lns {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		lns = append(lns, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}

// goBuild builds ./cmd/webhook of this module into bin.
func goBuild(ctx context.Context, bin string) error {
	gomod, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return fmt.Errorf("go env GOMOD: %w", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(gomod)))
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/webhook")
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build ./cmd/webhook in %s: %w", root, err)
	}
	return nil
}

// proc is a server process.
type proc struct {
	name, logPath string
	cmd           *exec.Cmd
	done          chan struct{}
	stopped       bool
}

func startProc(name, logPath, bin string, args ...string) (*proc, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the child has its own descriptor
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &proc{name: name, logPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	return p, nil
}

// stop sends SIGTERM and waits, killing after 15 s.
func (p *proc) stop() {
	if p.stopped {
		return
	}
	p.stopped = true
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

func (p *proc) waitReady(ctx context.Context, wait time.Duration, ready func() error) error {
	deadline := time.Now().Add(wait)
	for {
		err := ready()
		if err == nil {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s exited (%v); last lines of %s:\n%s", p.name, p.cmd.ProcessState, p.logPath, tail(p.logPath, 20))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after %s: %v; last lines of %s:\n%s", p.name, wait, err, p.logPath, tail(p.logPath, 20))
		}
	}
}

// httpOK: url answers (200 for plain HTTP; any status over TLS, where only
// the listener matters).
func httpOK(url string, tlsCfg *tls.Config) error {
	c := &http.Client{Timeout: time.Second}
	if tlsCfg != nil {
		c.Transport = &http.Transport{TLSClientConfig: tlsCfg.Clone()}
	}
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if tlsCfg == nil && resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s: %s", url, resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}

// probe sends one request of t to url: false if the path is not served.
func probe(url string, t *template, tlsCfg *tls.Config) (bool, error) {
	c := newClient(tlsCfg, 1)
	defer c.CloseIdleConnections()
	buf := make([]byte, len(t.body))
	uid := []byte("00000000-0000-4000-8000-000000000001")
	t.fill(buf, uid, []byte("probe000000"))
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(string(buf)))
	if err != nil {
		return false, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return false, fmt.Errorf("probing %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusNotFound {
		return false, nil
	}
	if _, _, err := check(resp.StatusCode, body, uid, false); err != nil {
		return false, fmt.Errorf("probing %s: %w", url, err)
	}
	return true, nil
}

func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// unschedulableLogLines returns (up to 5 of) the server's "No seed fits"
// log lines and how many there were.
func unschedulableLogLines(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var hits []string
	n := 0
	for _, line := range strings.Split(string(data), "\n") {
		if strings.Contains(line, "No seed fits") {
			n++
			if len(hits) < 5 {
				hits = append(hits, line)
			}
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d lines, the first:\n%s", n, strings.Join(hits, "\n"))
}

// env describes the machine and the command.
type env struct {
	header string
}

func machine(args []string) env {
	cmd := "go run ./hack/httpbench"
	if len(args) > 0 {
		cmd += " " + strings.Join(args, " ")
	}
	model := cpuModel()
	if model != "" {
		model += ", "
	}
	procsEnv := ""
	if v := os.Getenv("GOMAXPROCS"); v != "" {
		procsEnv = " (from $GOMAXPROCS)"
	}
	return env{header: fmt.Sprintf("Command: `%s`\n\nMachine: %s%d CPUs (nproc), GOMAXPROCS %d%s for the load generator and both servers, which share those CPUs; %s %s/%s; load average (1, 5, 15 min) before the first run: %s.",
		cmd, model, runtime.NumCPU(), runtime.GOMAXPROCS(0), procsEnv, runtime.Version(), runtime.GOOS, runtime.GOARCH, loadAvg())}
}
