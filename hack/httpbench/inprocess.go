package main

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"go.uber.org/zap/zapcore"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/config"
	"github.com/seedwarden/seedwarden/internal/handlers"
	"github.com/seedwarden/seedwarden/internal/landscape"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/placementtoken"
	"github.com/seedwarden/seedwarden/internal/seedreserve"
)

// The profiles label every sample with the side it comes from: the server's
// goroutines (started under side=server, which their connections inherit)
// or the load generator's (side=client).
const (
	labelSide   = "side"
	sideServer  = "server"
	sideClient  = "client"
	serverFocus = `net/http\.\(\*conn\)\.serve` // the root of every server-side stack
)

// inProcessServer is what `webhook serve --landscape` runs for
// /mutate-shoots (cmd/webhook/serve.go serveLandscape, registerWebhooks,
// newPlacementSigner in landscape mode), built in this process so that
// runtime/pprof sees it: the server has no pprof endpoint.
// It listens on port instead of the configured one.
func inProcessServer(cfgPath, landscapePath string, port int, logTo io.Writer) (webhook.Server, error) {
	cfg, err := config.Load(cfgPath)
	if err != nil {
		return nil, err
	}
	objs, err := landscape.ReadFile(landscapePath, nil)
	if err != nil {
		return nil, err
	}
	store := cache.NewStore(cache.Options{
		GardenNamespace: cfg.GardenNamespace,
		ReservationTTL:  cfg.ReservationTTL.Duration,
		Limits:          cache.Limits{PerNamespace: cfg.Reservations.MaxPerNamespace, Total: cfg.Reservations.MaxTotal},
	})
	store.Load(objs)
	key := make([]byte, placementtoken.MinKeyBytes)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	signer, err := placementtoken.NewSigner([][]byte{key}, cfg.Placement.TokenTTL.Duration, nil)
	if err != nil {
		return nil, err
	}
	level := zapcore.InfoLevel
	if cfg.Log.Level == "debug" {
		level = zapcore.DebugLevel
	}
	log := zap.New(zap.Level(level), zap.JSONEncoder(), zap.WriteTo(logTo))
	// As `webhook serve` does: controller-runtime's webhook logs with it too.
	ctrllog.SetLogger(log)

	srv := newWebhookServer(port, cfg.Server.CertDir)
	// As cmd/webhook registers it (minus the request timeouts of server.Guard,
	// which do not cost CPU).
	srv.Register(mutateShootsPath, handlers.NewMutatingHTTPHandler(&handlers.ShootMutator{
		Placer: &seedreserve.ClusterPlacer{Local: store},
		// As cmd/webhook's placementOptions converts the configuration.
		Options:       placement.Options{Strategy: placement.Strategy(cfg.Strategy), NetworkMode: placement.NetworkMode(cfg.NetworkOverlap), Scoring: scoringProfile(cfg.Scoring)},
		SchedulerName: cfg.SchedulerName,
		Announce:      cfg.Announce(),
		Signer:        signer,
		Metrics:       metrics.New(ctrlmetrics.Registry),
		Log:           log.WithName("mutate-shoots"),
	}, cfg.Server.MaxRequestBytes))
	return srv, nil
}

// inProcessBaseline is the baseline-server's webhook, in this process.
func inProcessBaseline(port int, certDir string) webhook.Server {
	srv := newWebhookServer(port, certDir)
	srv.Register(mutateShootsPath, &webhook.Admission{Handler: admission.HandlerFunc(func(context.Context, admission.Request) admission.Response {
		return admission.Allowed("")
	})})
	return srv
}

// startLabelled starts srv with every server goroutine labelled side=server
// and waits until it answers.
func startLabelled(ctx context.Context, srv webhook.Server) (stop func(), err error) {
	sctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	pprof.Do(sctx, pprof.Labels(labelSide, sideServer), func(ctx context.Context) {
		go func() { errc <- srv.Start(ctx) }()
	})
	stop = func() { cancel(); <-errc }
	check := srv.StartedChecker()
	deadline := time.Now().Add(30 * time.Second)
	for {
		req, _ := http.NewRequest(http.MethodGet, "/", nil)
		if err := check(req); err == nil {
			return stop, nil
		} else if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("in-process server not started: %w", err)
		}
		select {
		case err := <-errc:
			cancel()
			return nil, fmt.Errorf("in-process server: %w", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// profiles are the files of one profiled run.
type profiles struct {
	dir, name                      string
	cpu, allocsBefore, allocsAfter string
	mutex                          string
	cpuFile                        *os.File
	err                            error
}

func newProfiles(dir, name string) *profiles {
	p := &profiles{dir: dir, name: name}
	p.cpu = filepath.Join(dir, name+"-cpu.pprof")
	p.allocsBefore = filepath.Join(dir, name+"-allocs-before.pprof")
	p.allocsAfter = filepath.Join(dir, name+"-allocs-after.pprof")
	p.mutex = filepath.Join(dir, name+"-mutex.pprof")
	return p
}

// hooks start the CPU and mutex profiles and snapshot allocations at the
// start of the window, and stop and write them at its end.
func (p *profiles) hooks() hooks {
	return hooks{
		start: func() {
			runtime.GC()
			p.setErr(writeProfile("allocs", p.allocsBefore))
			runtime.SetMutexProfileFraction(10)
			f, err := os.Create(p.cpu)
			if err != nil {
				p.setErr(err)
				return
			}
			p.cpuFile = f
			p.setErr(pprof.StartCPUProfile(f))
		},
		end: func() {
			if p.cpuFile != nil {
				pprof.StopCPUProfile()
				p.setErr(p.cpuFile.Close())
			}
			p.setErr(writeProfile("mutex", p.mutex))
			runtime.SetMutexProfileFraction(0)
			runtime.GC()
			p.setErr(writeProfile("allocs", p.allocsAfter))
		},
	}
}

func (p *profiles) setErr(err error) {
	if err != nil && p.err == nil {
		p.err = err
	}
}

func writeProfile(name, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup(name).WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// report prints the server side of the profiles with `go tool pprof`.
func (p *profiles) report(w io.Writer, requests int) {
	if p.err != nil {
		fmt.Fprintf(w, "profiling failed: %v\n", p.err)
		return
	}
	views := []struct {
		title string
		args  []string
	}{
		{"CPU, server side, top 15 by own time", []string{"-top", "-nodecount=15", "-tagfocus=" + labelSide + "=" + sideServer, p.cpu}},
		{"CPU, server side, top 25 by cumulative time", []string{"-top", "-cum", "-nodecount=25", "-tagfocus=" + labelSide + "=" + sideServer, p.cpu}},
		{"Allocated bytes in the window, server side, top 15", []string{"-top", "-nodecount=15", "-sample_index=alloc_space", "-focus=" + serverFocus, "-base", p.allocsBefore, p.allocsAfter}},
		{"Allocated objects in the window, server side, top 15", []string{"-top", "-nodecount=15", "-sample_index=alloc_objects", "-focus=" + serverFocus, "-base", p.allocsBefore, p.allocsAfter}},
		{"Mutex contention in the window, server side, top 10", []string{"-top", "-nodecount=10", "-focus=" + serverFocus, p.mutex}},
	}
	if cpu, ok := p.serverCPU(); ok && requests > 0 {
		fmt.Fprintf(w, "\nServer side: %s of CPU samples for %d requests, %.0f µs per request (percentages below are of all samples, the load generator's included).\n",
			cpu.Round(time.Millisecond), requests, float64(cpu.Microseconds())/float64(requests))
	}
	for _, v := range views {
		args := append([]string{"tool", "pprof"}, v.args...)
		fmt.Fprintf(w, "\n#### %s (%d requests)\n\n```\n$ go %s\n", v.title, requests, strings.Join(args, " "))
		out, err := exec.Command("go", args...).CombinedOutput()
		fmt.Fprint(w, string(out))
		if err != nil {
			fmt.Fprintf(w, "(go tool pprof: %v)\n", err)
		}
		fmt.Fprintln(w, "```")
	}
}

// profileRun runs one in-process server under load with profiles written to
// dir/name-*.pprof.
func profileRun(ctx context.Context, o *options, name string, srv webhook.Server, t target, tlsCfg *tls.Config, dir string) (*result, *profiles, error) {
	stop, err := startLabelled(ctx, srv)
	if err != nil {
		return nil, nil, err
	}
	defer stop()
	p := newProfiles(dir, name)
	var res *result
	pprof.Do(ctx, pprof.Labels(labelSide, sideClient), func(ctx context.Context) {
		res = runLoad(ctx, t, tlsCfg, o.load(), p.hooks(), nil)
	})
	if errors.Is(ctx.Err(), context.Canceled) {
		return nil, nil, ctx.Err()
	}
	return res, p, nil
}

// serverCPU is the CPU time of the samples labelled side=server.
func (p *profiles) serverCPU() (time.Duration, bool) {
	out, err := exec.Command("go", "tool", "pprof", "-tags", p.cpu).Output()
	if err != nil {
		return 0, false
	}
	// A line such as "       6.29s (83.42%): server".
	for _, line := range strings.Split(string(out), "\n") {
		value, label, ok := strings.Cut(strings.TrimSpace(line), ": ")
		if !ok || label != sideServer {
			continue
		}
		d, err := time.ParseDuration(strings.Fields(value)[0])
		return d, err == nil
	}
	return 0, false
}

// scoringProfile converts the scoring block as cmd/webhook's does (a
// profile placement refuses makes every decision unschedulable, step
// Scoring, so a bad one shows at once).
func scoringProfile(s *config.Scoring) *placement.Profile {
	if s == nil {
		return nil
	}
	p := &placement.Profile{DefaultCapacity: s.DefaultCapacity}
	for _, ws := range s.Scorers {
		p.Scorers = append(p.Scorers, placement.WeightedScorer{Name: placement.ScorerName(ws.Name), Weight: ws.Weight})
	}
	return p
}
