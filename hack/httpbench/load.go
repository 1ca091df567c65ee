package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"
)

// unschedulablePrefix starts the warning of a Shoot no seed fits
// (handlers.UnschedulableWarningPrefix; not imported, so that the load
// generator only knows the wire format).
const unschedulablePrefix = "seedwarden: no seed fits"

// target is one server and what to send it.
type target struct {
	server string // "baseline" or "seedwarden"
	url    string
	// tmpls are cycled through: worker w's request n uses (w+n) mod len.
	tmpls []*template
	// placed: every answer must carry a JSON patch naming the seed (placementPaths).
	placed bool
}

// hooks run at the start and the end of the measured window (profiling).
type hooks struct {
	start, end func()
}

// result is one load run.
type result struct {
	server        string
	requests      int // answered in the window (errors included)
	errors        int
	unschedulable int // among errors: admitted with the no-seed warning
	warmupErrors  int
	window        time.Duration
	lat           []time.Duration // sorted, one per request in the window
	seeds         map[string]int  // placements per seed (placed targets)
	errSamples    []string
	loadAvg       string  // /proc/loadavg before the run
	serverCPU     float64 // seconds of server process CPU in the window; <0 unknown
	clientCPU     float64 // seconds of this process's CPU in the window; <0 unknown
}

func (r *result) rps() float64 { return float64(r.requests) / r.window.Seconds() }

// percentile of the sorted latencies (nearest rank).
func (r *result) percentile(p float64) time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(r.lat)))) - 1
	return r.lat[min(max(i, 0), len(r.lat)-1)]
}

// newClient is what every worker of one run shares: keep-alive HTTP/1.1
// over TLS trusting the generated CA, one idle connection per worker.
func newClient(tlsCfg *tls.Config, concurrency int) *http.Client {
	tr := &http.Transport{
		TLSClientConfig:     tlsCfg.Clone(),
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        concurrency,
		MaxIdleConnsPerHost: concurrency,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		// A non-nil empty map turns HTTP/2 off, like the API server's
		// HTTP/1.1 connections to webhooks that only offer http/1.1.
		TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{},
	}
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// load is how a run loads a server.
type load struct {
	concurrency      int
	warmup, duration time.Duration
	// rate > 0: open loop, rate requests per second in all (each worker
	// sends on a fixed schedule, and latency counts from the scheduled
	// time, so a stalled server's queueing shows). 0: closed loop, each
	// worker sends its next request when the last is answered.
	rate float64
}

// runLoad sends t's requests from l.concurrency workers for warmup+duration
// and measures the requests started (or scheduled) in the last duration.
// cpu, when not nil, returns the server's CPU seconds so far.
//
// Complexity 18 (developer tool): the window's timing, CPU and hooks read best in one place.
func runLoad(ctx context.Context, t target, tlsCfg *tls.Config, l load, h hooks, cpu func() float64) *result {
	concurrency, warmup, duration := l.concurrency, l.warmup, l.duration
	client := newClient(tlsCfg, concurrency)
	defer client.CloseIdleConnections()

	res := &result{server: t.server, window: duration, seeds: map[string]int{}, loadAvg: loadAvg(), serverCPU: -1, clientCPU: -1}
	begin := time.Now()
	start := begin.Add(warmup)
	end := start.Add(duration)
	var interval time.Duration // between one worker's requests, open loop
	if l.rate > 0 {
		interval = time.Duration(float64(concurrency) / l.rate * float64(time.Second))
	}

	// The window's CPU figures and the hooks, at its start and end.
	stop := make(chan struct{})
	var coord sync.WaitGroup
	coord.Go(func() {
		var s0, c0 float64
		select {
		case <-time.After(time.Until(start)):
		case <-stop:
			return
		}
		if h.start != nil {
			h.start()
		}
		if cpu != nil {
			s0 = cpu()
		}
		c0 = selfCPU()
		select {
		case <-time.After(time.Until(end)):
		case <-stop:
			return
		}
		if cpu != nil {
			res.serverCPU = cpu() - s0
		}
		if c0 >= 0 {
			res.clientCPU = selfCPU() - c0
		}
		if h.end != nil {
			h.end()
		}
	})

	workers := make([]*worker, concurrency)
	var wg sync.WaitGroup
	for g := range workers {
		w := &worker{id: g, t: t, client: client, seeds: map[string]int{}, rng: rand.New(rand.NewPCG(uint64(begin.UnixNano()), uint64(g))), interval: interval}
		if interval > 0 {
			w.next = begin.Add(interval * time.Duration(g) / time.Duration(concurrency))
		}
		workers[g] = w
		wg.Go(func() { w.run(ctx, start, end) })
	}
	wg.Wait()
	close(stop)
	coord.Wait()

	for _, w := range workers {
		res.lat = append(res.lat, w.lat...)
		res.errors += w.errors
		res.unschedulable += w.unschedulable
		res.warmupErrors += w.warmupErrors
		for s, n := range w.seeds {
			res.seeds[s] += n
		}
		for _, e := range w.errSamples {
			if len(res.errSamples) < 5 && !slices.Contains(res.errSamples, e) {
				res.errSamples = append(res.errSamples, e)
			}
		}
	}
	res.requests = len(res.lat)
	slices.Sort(res.lat)
	return res
}

type worker struct {
	id     int
	t      target
	client *http.Client
	rng    *rand.Rand
	// interval > 0: open loop, the next request is due at next.
	interval time.Duration
	next     time.Time

	lat                                 []time.Duration
	errors, unschedulable, warmupErrors int
	seeds                               map[string]int
	errSamples                          []string
}

// run is one client's loop: open or closed, timed, checked, sampled.
//
// Complexity 18 (developer tool): one request's life, kept in order on one screen.
func (w *worker) run(ctx context.Context, start, end time.Time) {
	// A body is reused four requests later: by then the transport is long
	// done with it.
	size := 0
	for _, t := range w.t.tmpls {
		size = max(size, len(t.body))
	}
	var bufs [4][]byte
	for i := range bufs {
		bufs[i] = make([]byte, size)
	}
	uid := make([]byte, len(uidMarker))
	name := make([]byte, len(nameMarker))
	header := http.Header{
		"Content-Type": {"application/json"},
		"Accept":       {"application/json, */*"},
		"User-Agent":   {"kube-apiserver-admission"},
	}
	var body bytes.Buffer
	w.lat = make([]time.Duration, 0, 4096)
	for n := 0; ctx.Err() == nil; n++ {
		putUID(uid, w.rng)
		putName(name, w.id, n)
		tmpl := w.t.tmpls[(w.id+n)%len(w.t.tmpls)]
		buf := bufs[n%len(bufs)][:len(tmpl.body)]
		tmpl.fill(buf, uid, name)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.t.url, bytes.NewReader(buf))
		if err != nil {
			panic(err) // the URL is ours
		}
		req.Header = header

		t0 := time.Now()
		if w.interval > 0 {
			if d := time.Until(w.next); d > 0 {
				select {
				case <-time.After(d):
				case <-ctx.Done():
					return
				}
			}
			t0 = w.next
			w.next = w.next.Add(w.interval)
		}
		if !t0.Before(end) {
			return
		}
		resp, err := w.client.Do(req)
		if err == nil {
			body.Reset()
			_, err = body.ReadFrom(resp.Body)
			resp.Body.Close()
		}
		lat := time.Since(t0)
		var seed string
		unschedulable := false
		if err == nil {
			seed, unschedulable, err = check(resp.StatusCode, body.Bytes(), uid, w.t.placed)
		}
		if t0.Before(start) {
			if err != nil {
				w.warmupErrors++
			}
			continue
		}
		w.lat = append(w.lat, lat)
		if err != nil {
			w.errors++
			if unschedulable {
				w.unschedulable++
			}
			if len(w.errSamples) < 3 {
				w.errSamples = append(w.errSamples, err.Error())
			}
			continue
		}
		if seed != "" {
			w.seeds[seed]++
		}
	}
}

// putUID writes a random version 4 UUID.
func putUID(dst []byte, rng *rand.Rand) {
	var b [16]byte
	hi, lo := rng.Uint64(), rng.Uint64()
	for i := range 8 {
		b[i], b[8+i] = byte(hi>>(8*i)), byte(lo>>(8*i))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	hex.Encode(dst[0:8], b[0:4])
	dst[8] = '-'
	hex.Encode(dst[9:13], b[4:6])
	dst[13] = '-'
	hex.Encode(dst[14:18], b[6:8])
	dst[18] = '-'
	hex.Encode(dst[19:23], b[8:10])
	dst[23] = '-'
	hex.Encode(dst[24:36], b[10:16])
}

// putName writes a name unique per worker and request of the run, as long
// as nameMarker: "h", three hex digits of the worker, seven of the request.
func putName(dst []byte, worker, n int) {
	const digits = "0123456789abcdef"
	dst[0] = 'h'
	for i := 3; i >= 1; i-- {
		dst[i] = digits[worker&0xf]
		worker >>= 4
	}
	for i := 10; i >= 4; i-- {
		dst[i] = digits[n&0xf]
		n >>= 4
	}
}

type reviewResponse struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Response   *struct {
		UID      string   `json:"uid"`
		Allowed  bool     `json:"allowed"`
		Patch    []byte   `json:"patch"`
		Warnings []string `json:"warnings"`
		Status   *struct {
			Code    int32  `json:"code"`
			Message string `json:"message"`
		} `json:"status"`
	} `json:"response"`
}

type patchOp struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value"`
}

// placementPaths are where a placing answer names its seed: spec.seedName in
// placement mode patch, the announcing annotation in mode binding (the
// Shoot's template has annotations, so the patch adds the key).
var placementPaths = sets.New("/spec/seedName", "/metadata/annotations/seedwarden.io~1seed")

// check verifies an answer: 200, an AdmissionReview for uid that allows; if
// placed, with a patch naming the seed (placementPaths; the seed is returned).
//
// Complexity 18 (developer tool): one check per way an answer can be wrong.
func check(status int, body, uid []byte, placed bool) (seed string, unschedulable bool, err error) {
	if status != http.StatusOK {
		return "", false, fmt.Errorf("HTTP %d: %s", status, abbreviate(body))
	}
	var rv reviewResponse
	if err := json.Unmarshal(body, &rv); err != nil {
		return "", false, fmt.Errorf("not JSON: %v: %s", err, abbreviate(body))
	}
	r := rv.Response
	switch {
	case rv.Kind != "AdmissionReview" || rv.APIVersion != "admission.k8s.io/v1":
		return "", false, fmt.Errorf("not an admission.k8s.io/v1 AdmissionReview: %s", abbreviate(body))
	case r == nil:
		return "", false, fmt.Errorf("AdmissionReview without response")
	case r.UID != string(uid):
		return "", false, fmt.Errorf("response for uid %q, want %q", r.UID, uid)
	case !r.Allowed:
		msg := ""
		if r.Status != nil {
			msg = fmt.Sprintf(" (%d: %s)", r.Status.Code, r.Status.Message)
		}
		return "", false, fmt.Errorf("denied%s", msg)
	}
	for _, w := range r.Warnings {
		if strings.HasPrefix(w, unschedulablePrefix) {
			return "", true, fmt.Errorf("unschedulable: %s", abbreviate([]byte(w)))
		}
	}
	if !placed {
		return "", false, nil
	}
	var ops []patchOp
	if err := json.Unmarshal(r.Patch, &ops); err != nil {
		return "", false, fmt.Errorf("patch is not a JSON patch: %v", err)
	}
	for _, op := range ops {
		if op.Op == "add" && placementPaths.Has(op.Path) && json.Unmarshal(op.Value, &seed) == nil && seed != "" {
			return seed, false, nil
		}
	}
	return "", false, fmt.Errorf("no patch sets /spec/seedName (placement mode patch) or annotation seedwarden.io/seed (mode binding): %s", abbreviate(r.Patch))
}

func abbreviate(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
