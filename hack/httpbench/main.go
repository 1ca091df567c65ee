// Command httpbench measures seedwarden's webhook server over HTTPS against a
// baseline built in the same run, and prints Markdown tables for
// BENCHMARKS.md (section "HTTP").
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
// `httpbench memory` measures the server's peak memory under concurrent
// maximum-size reviews instead (memory.go).
//
// -size does the same for /validate-resource-size with a 100 KB ConfigMap
// (skipped if the server does not serve that path). -profile then runs
// seedwarden's /mutate-shoots handler and the baseline in this process (the
// server has no pprof endpoint) with CPU, allocation and mutex profiles
// written to -out, and prints the server side of them.
//
// Progress goes to stderr, the report to stdout.
package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"os"
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
	placementMode    string
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
	if len(os.Args) > 1 && os.Args[1] == "memory" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := memoryCommand(ctx, os.Args[2:])
		stop()
		os.Exit(code)
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
	fs.StringVar(&o.placementMode, "placement-mode", "binding", "the server's placement.mode: binding (the default: the seed is announced in an annotation) or patch (spec.seedName is set)")
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
	fx, err := newFixtures(o, tmp)
	if err != nil {
		return err
	}
	oursProc, baseProc, err := startServers(ctx, o, fx)
	if err != nil {
		return err
	}
	defer oursProc.stop()
	defer baseProc.stop()

	env := machine(args)
	mutate := bench3(ctx, o, fx.tlsCfg,
		target{server: "baseline", url: fx.baseURL() + mutateShootsPath + "?timeout=10s", tmpls: fx.shoots},
		target{server: "seedwarden", url: fx.oursURL() + mutateShootsPath + "?timeout=10s", tmpls: fx.shoots, placed: true},
		baseProc, oursProc)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	fmt.Println(env.header)
	printTable(os.Stdout, fmt.Sprintf("HTTP: %s, seedwarden vs. an empty controller-runtime webhook", mutateShootsPath), o, fx.shoots, "Shoot", mutate, true)
	if o.size {
		if err := benchSize(ctx, o, fx, baseProc, oursProc); err != nil {
			return err
		}
	}

	if tail := unschedulableLogLines(oursProc.logPath); tail != "" {
		fmt.Printf("\nseedwarden logged Shoots it could not place:\n\n```\n%s\n```\n", tail)
	}
	oursProc.stop()
	baseProc.stop()

	if o.profile {
		return profile(ctx, o, fx.cfgPath, fx.landscape, fx.certDir, fx.shoots, fx.tlsCfg)
	}
	return nil
}

// fixtures are what one bench run writes and sends: certificates, the
// landscape, the configuration, the request templates and the ports.
type fixtures struct {
	tmp, certDir, landscape, cfgPath string
	tlsCfg                           *tls.Config
	shoots, sizeTmpl                 []*template
	ours                             ports
	baselinePort                     int
}

func (fx *fixtures) oursURL() string { return fmt.Sprintf("https://127.0.0.1:%d", fx.ours.webhook) }
func (fx *fixtures) baseURL() string { return fmt.Sprintf("https://127.0.0.1:%d", fx.baselinePort) }

func newFixtures(o *options, tmp string) (*fixtures, error) {
	fx := &fixtures{tmp: tmp, certDir: filepath.Join(tmp, "certs"), landscape: filepath.Join(tmp, "landscape.json")}
	if err := certgen.Generate(fx.certDir, certgen.DefaultHosts, time.Now()); err != nil {
		return nil, fmt.Errorf("certificates: %w", err)
	}
	var err error
	if fx.tlsCfg, err = clientTLS(filepath.Join(fx.certDir, certgen.CAFile)); err != nil {
		return nil, err
	}
	if err := writeLandscape(fx.landscape, o.seeds, o.shoots); err != nil {
		return nil, fmt.Errorf("landscape: %w", err)
	}
	if fx.shoots, err = shootTemplates(); err != nil {
		return nil, err
	}
	sizeLimit := ""
	if o.size {
		t, err := configMapTemplate(o.sizeBytes)
		if err != nil {
			return nil, err
		}
		fx.sizeTmpl = []*template{t}
		sizeLimit = "1Mi"
	}
	p, err := freePorts(4)
	if err != nil {
		return nil, err
	}
	fx.ours = ports{webhook: p[0], metrics: p[1], health: p[2]}
	fx.baselinePort = p[3]
	if fx.cfgPath, err = writeFile(tmp, "config.yaml", configYAML(fx.ours, fx.certDir, o.reservationTTL, sizeLimit, o.placementMode)); err != nil {
		return nil, err
	}
	progress("fixtures in %s: Shoots of %s bytes in %d regions, AdmissionReviews of %s bytes, landscape %d seeds and %d Shoots",
		tmp, objectSizes(fx.shoots), len(fx.shoots), bodySizes(fx.shoots), o.seeds, o.shoots)
	return fx, nil
}

// startServers starts seedwarden (built here unless -webhook names one)
// and the baseline, and waits until both answer. On error nothing is left
// running.
func startServers(ctx context.Context, o *options, fx *fixtures) (ours, base *proc, err error) {
	bin := o.webhookBin
	if bin == "" {
		bin = filepath.Join(fx.tmp, "webhook")
		progress("building %s", bin)
		if err := goBuild(ctx, bin); err != nil {
			return nil, nil, err
		}
	}
	self, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	ours, err = startProc("seedwarden", filepath.Join(fx.tmp, "seedwarden.log"), bin, "serve", "--landscape", fx.landscape, "--config", fx.cfgPath)
	if err != nil {
		return nil, nil, err
	}
	base, err = startProc("baseline", filepath.Join(fx.tmp, "baseline.log"), self, "baseline-server", "-port", fmt.Sprint(fx.baselinePort), "-cert-dir", fx.certDir)
	if err != nil {
		ours.stop()
		return nil, nil, err
	}
	readyz := fmt.Sprintf("http://127.0.0.1:%d/readyz", fx.ours.health)
	err = ours.waitReady(ctx, 2*time.Minute, func() error { return httpOK(readyz, nil) })
	if err == nil {
		err = base.waitReady(ctx, time.Minute, func() error { return httpOK(fx.baseURL()+"/", fx.tlsCfg) })
	}
	if err != nil {
		ours.stop()
		base.stop()
		return nil, nil, err
	}
	progress("servers ready: seedwarden pid %d on :%d, baseline pid %d on :%d", ours.cmd.Process.Pid, fx.ours.webhook, base.cmd.Process.Pid, fx.baselinePort)
	return ours, base, nil
}

// benchSize runs the resource-size webhook against the baseline, if this
// seedwarden serves it.
func benchSize(ctx context.Context, o *options, fx *fixtures, baseProc, oursProc *proc) error {
	url := fx.oursURL() + validateResourceSizePath + "?timeout=10s"
	served, err := probe(url, fx.sizeTmpl[0], fx.tlsCfg)
	if err != nil {
		return err
	}
	if !served {
		fmt.Printf("\n%s: not served by this seedwarden (404); resource-size benchmark skipped.\n", validateResourceSizePath)
		return nil
	}
	size := bench3(ctx, o, fx.tlsCfg,
		target{server: "baseline", url: fx.baseURL() + validateResourceSizePath + "?timeout=10s", tmpls: fx.sizeTmpl},
		target{server: "seedwarden", url: url, tmpls: fx.sizeTmpl},
		baseProc, oursProc)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	printTable(os.Stdout, fmt.Sprintf("HTTP: %s, seedwarden vs. an empty controller-runtime webhook", validateResourceSizePath), o, fx.sizeTmpl, "ConfigMap", size, false)
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
