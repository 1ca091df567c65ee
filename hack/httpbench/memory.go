package main

// The memory subcommand: peak RSS of the real server under concurrent
// maximum-size reviews (BENCHMARKS.md, "Memory bound").
//
//	go run ./hack/httpbench memory -before BIN [-webhook BIN] [-concurrency 100]
//	                               [-duration 10s] [-body-bytes 3145000]
//	                               [-gomemlimit 460MiB] [-after-server YAML] [-shapes a,b]
//
// For each body shape (memory_bodies.go) and each binary (-before, then
// -webhook, built here when not given), it starts the server afresh (`webhook
// serve --landscape`, GOMEMLIMIT as shipped in deploy/manifests), lets
// -concurrency clients, each on its own connection, send the same
// maximum-size review again and again for -duration (the clients take turns
// at the four paths of memoryPaths), and reports every answer's status and the
// server's peak resident set size (VmHWM) once ready and after the load.

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

type memoryOptions struct {
	beforeBin, afterBin string
	concurrency         int
	duration            time.Duration
	bodyBytes           int
	goMemLimit          string
	seeds, shoots       int
	// afterServer is YAML added to the server section of the configuration
	// of -webhook only (the -before binary may not know its fields).
	afterServer string
	shapes      string
}

func memoryCommand(ctx context.Context, args []string) int {
	o := memoryOptions{}
	fs := flag.NewFlagSet("httpbench memory", flag.ContinueOnError)
	fs.StringVar(&o.beforeBin, "before", "", "the seedwarden binary to compare with (required), e.g. built from the main branch")
	fs.StringVar(&o.afterBin, "webhook", "", "the seedwarden binary under test (default: go build ./cmd/webhook)")
	fs.IntVar(&o.concurrency, "concurrency", 100, "concurrent clients, one connection each")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "load per server and shape")
	fs.IntVar(&o.bodyBytes, "body-bytes", 3145000, "review size (the default server.maxRequestBytes is 3145728)")
	fs.StringVar(&o.goMemLimit, "gomemlimit", "460MiB", "GOMEMLIMIT of the server, as deploy/manifests ships it")
	fs.IntVar(&o.seeds, "seeds", 1000, "seeds in the landscape")
	fs.IntVar(&o.shoots, "shoots", 10000, "Shoots in the landscape")
	fs.StringVar(&o.afterServer, "after-server", "", "YAML lines added to the server section of -webhook's configuration only, e.g. 'maxRequestBytesInFlight: 16777216'")
	fs.StringVar(&o.shapes, "shapes", "", "comma-separated body shapes to run (default: all)")
	if err := fs.Parse(args); err != nil || o.beforeBin == "" || fs.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "httpbench memory: bad usage (-before BIN is required; no arguments)")
		return 2
	}
	if err := benchMemory(ctx, o); err != nil {
		fmt.Fprintf(os.Stderr, "httpbench memory: %v\n", err)
		return 1
	}
	return 0
}

// memoryRun is one server under one shape's load.
type memoryRun struct {
	server, shape string
	statuses      map[string]int // "200", "429", "error", ...
	readyRSS      int64          // bytes (VmHWM when ready: loading the landscape)
	peakRSS       int64          // bytes (VmHWM)
}

func benchMemory(ctx context.Context, o memoryOptions) error {
	tmp, err := os.MkdirTemp("", "httpbench-memory-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	fx, err := newFixtures(&options{seeds: o.seeds, shoots: o.shoots, reservationTTL: 5 * time.Second, placementMode: "binding", size: true, sizeBytes: 1 << 10}, tmp)
	if err != nil {
		return err
	}
	// The resource-size webhook measures Shoots (it skips kinds without a limit).
	cfg, err := os.ReadFile(fx.cfgPath)
	if err != nil {
		return err
	}
	cfg = bytes.Replace(cfg, []byte(`- apiGroups: [""]`), []byte("- apiGroups: [core.gardener.cloud]\n    apiVersions: [\"*\"]\n    resources: [shoots]\n    size: 100Ki\n  - apiGroups: [\"\"]"), 1)
	if err := os.WriteFile(fx.cfgPath, cfg, 0o644); err != nil {
		return err
	}
	afterCfg := fx.cfgPath
	if o.afterServer != "" {
		afterCfg = filepath.Join(tmp, "config-after.yaml")
		extended := bytes.Replace(cfg, []byte("server:\n"), []byte("server:\n  "+o.afterServer+"\n"), 1)
		if err := os.WriteFile(afterCfg, extended, 0o644); err != nil {
			return err
		}
	}
	after := o.afterBin
	if after == "" {
		after = filepath.Join(tmp, "webhook")
		if err := goBuild(ctx, after); err != nil {
			return err
		}
	}
	var runs []memoryRun
	for _, shape := range bodyShapes {
		if o.shapes != "" && !slices.Contains(strings.Split(o.shapes, ","), shape.name) {
			continue
		}
		body, err := maxSizeReview(shape, o.bodyBytes)
		if err != nil {
			return err
		}
		progress("shape %s: %d bytes", shape.name, len(body))
		for _, s := range []struct{ name, bin, cfg string }{{"before", o.beforeBin, fx.cfgPath}, {"after", after, afterCfg}} {
			r, err := memoryLoad(ctx, o, fx, s.bin, s.cfg, body)
			if err != nil {
				return fmt.Errorf("%s, %s: %w", s.name, shape.name, err)
			}
			r.server, r.shape = s.name, shape.name
			progress("  %s: peak RSS %.0f MiB, answers %v", s.name, float64(r.peakRSS)/(1<<20), r.statuses)
			runs = append(runs, r)
		}
	}
	printMemory(o, runs)
	return nil
}

// memoryLoad starts bin afresh and loads it with body.
func memoryLoad(ctx context.Context, o memoryOptions, fx *fixtures, bin, cfgPath string, body []byte) (memoryRun, error) {
	p, err := startProcEnv("seedwarden", filepath.Join(fx.tmp, "seedwarden.log"), []string{"GOMEMLIMIT=" + o.goMemLimit},
		bin, "serve", "--landscape", fx.landscape, "--config", cfgPath)
	if err != nil {
		return memoryRun{}, err
	}
	defer p.stop()
	readyz := fmt.Sprintf("http://127.0.0.1:%d/readyz", fx.ours.health)
	if err := p.waitReady(ctx, 2*time.Minute, func() error { return httpOK(readyz, nil) }); err != nil {
		return memoryRun{}, err
	}
	r := memoryRun{statuses: map[string]int{}, readyRSS: procPeakRSS(p.cmd.Process.Pid)}
	var mu sync.Mutex
	ctx, cancel := context.WithTimeout(ctx, o.duration)
	defer cancel()
	var wg sync.WaitGroup
	for i := range o.concurrency {
		url := fx.oursURL() + memoryPaths[i%len(memoryPaths)] + "?timeout=10s"
		c := newClient(fx.tlsCfg, 1)
		wg.Go(func() {
			defer c.CloseIdleConnections()
			for ctx.Err() == nil {
				s := postOnce(ctx, c, url, body)
				if ctx.Err() != nil {
					return // cut off by the end of the run
				}
				mu.Lock()
				r.statuses[s]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	r.peakRSS = procPeakRSS(p.cmd.Process.Pid)
	return r, nil
}

// slowAnswer is the shortest webhook timeoutSeconds shipped (the size
// webhook's): an answer later than this would have been given up on.
const slowAnswer = 3 * time.Second

// postOnce sends body and returns the answer's status code, or "error",
// with " late" when it came after slowAnswer.
func postOnce(ctx context.Context, c *http.Client, url string, body []byte) string {
	start := time.Now()
	s := post(ctx, c, url, body)
	if time.Since(start) > slowAnswer {
		s += " late"
	}
	return s
}

func post(ctx context.Context, c *http.Client, url string, body []byte) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return "error"
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return "error"
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return strconv.Itoa(resp.StatusCode)
}

func printMemory(o memoryOptions, runs []memoryRun) {
	fmt.Printf("Command: `go run ./hack/httpbench memory %s`\n\n", strings.Join(os.Args[2:], " "))
	fmt.Printf("%d clients, %s per run, reviews of %d bytes, GOMEMLIMIT=%s; load average before: %s.\n\n", o.concurrency, o.duration, o.bodyBytes, o.goMemLimit, loadAvg())
	fmt.Println("| shape | server | answers | peak RSS when ready | peak RSS |")
	fmt.Println("|---|---|---|---:|---:|")
	for _, r := range runs {
		var keys []string
		for k := range r.statuses {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var parts []string
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s: %d", k, r.statuses[k]))
		}
		fmt.Printf("| %s | %s | %s | %.0f MiB | %.0f MiB |\n", r.shape, r.server, strings.Join(parts, ", "), float64(r.readyRSS)/(1<<20), float64(r.peakRSS)/(1<<20))
	}
}
