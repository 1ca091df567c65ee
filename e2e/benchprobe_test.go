package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// What TestCreateLatencyWebhooks needs beside the CREATEs themselves: taking
// the webhook configurations away and back, and the evidence of what a
// CREATE costs where (CPU of each process, connections to the webhook, the
// API server's and the webhook's own metrics).

// webhookRegistration is the suite's two webhook configurations as they
// were registered, so a benchmark can remove them and restore them unchanged.
type webhookRegistration struct {
	m admissionregistrationv1.MutatingWebhookConfiguration
	v admissionregistrationv1.ValidatingWebhookConfiguration
}

// without is reg without the named webhooks.
func (reg *webhookRegistration) without(names ...string) *webhookRegistration {
	out := &webhookRegistration{m: *reg.m.DeepCopy(), v: *reg.v.DeepCopy()}
	out.m.Webhooks = slices.DeleteFunc(out.m.Webhooks, func(w admissionregistrationv1.MutatingWebhook) bool { return slices.Contains(names, w.Name) })
	out.v.Webhooks = slices.DeleteFunc(out.v.Webhooks, func(w admissionregistrationv1.ValidatingWebhook) bool { return slices.Contains(names, w.Name) })
	return out
}

func (st *suite) saveRegistration(ctx context.Context) (*webhookRegistration, error) {
	reg := &webhookRegistration{}
	if err := st.c.Get(ctx, keyOf("", "seedwarden"), &reg.m); err != nil {
		return nil, err
	}
	if err := st.c.Get(ctx, keyOf("", "seedwarden"), &reg.v); err != nil {
		return nil, err
	}
	for _, o := range []metav1.Object{&reg.m, &reg.v} {
		o.SetResourceVersion("")
		o.SetUID("")
		o.SetGeneration(0)
		o.SetCreationTimestamp(metav1.Time{})
		o.SetManagedFields(nil)
	}
	return reg, nil
}

// shootCreateHooks are the registered webhooks a Shoot CREATE without a seed
// passes: the guard of seed choices only where the mutating webhook sets
// spec.seedName (placing, in placement mode patch; an empty webhook in its
// place sets none, so the guard's condition leaves the CREATE out).
func (st *suite) shootCreateHooks(placing bool) []string {
	hooks := []string{webhookPlace, webhookShootSize}
	if placing && !bindingMode() {
		hooks = append(hooks, webhookSeed)
	}
	var out []string
	for _, n := range hooks {
		if _, ok := st.registered[n]; ok {
			out = append(out, n)
		}
	}
	return out
}

// pointedAt is reg with every webhook's URL pointed at w (same path).
func (reg *webhookRegistration) pointedAt(w *emptyWebhook) (*webhookRegistration, error) {
	out := &webhookRegistration{m: *reg.m.DeepCopy(), v: *reg.v.DeepCopy()}
	ccs := make([]*admissionregistrationv1.WebhookClientConfig, 0, len(out.m.Webhooks)+len(out.v.Webhooks))
	for i := range out.m.Webhooks {
		ccs = append(ccs, &out.m.Webhooks[i].ClientConfig)
	}
	for i := range out.v.Webhooks {
		ccs = append(ccs, &out.v.Webhooks[i].ClientConfig)
	}
	for _, cc := range ccs {
		if cc.URL == nil {
			return nil, fmt.Errorf("a registered webhook has no clientConfig.url")
		}
		u, err := w.url(*cc.URL)
		if err != nil {
			return nil, err
		}
		cc.URL = &u
	}
	return out, nil
}

// setRegistration replaces the webhook configurations by reg (none when
// nil), then waits until the API server acts on it: a dry-run Shoot CREATE
// is placed or not (placing), and (kube-apiserver's metrics) every Shoot
// webhook is called by it, or none is.
func (st *suite) setRegistration(ctx context.Context, reg *webhookRegistration, placing bool) error {
	for _, o := range []client.Object{
		&admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "seedwarden"}},
		&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "seedwarden"}},
	} {
		if err := st.c.Delete(ctx, o); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("removing the webhook configurations: %w", err)
		}
	}
	if reg != nil {
		if err := st.c.Create(ctx, reg.m.DeepCopy()); err != nil {
			return fmt.Errorf("registering the mutating webhooks: %w", err)
		}
		if err := st.c.Create(ctx, reg.v.DeepCopy()); err != nil {
			return fmt.Errorf("registering the validating webhooks: %w", err)
		}
	}
	hooks, on := st.shootCreateHooks(placing), reg != nil
	if onGardener() {
		// gardener-apiserver calls the Shoot webhooks, and its metrics are
		// not reachable: the dry run's placement is the evidence there.
		hooks = nil
	}
	return poll(ctx, 30*time.Second, 100*time.Millisecond, func() error {
		before, err := st.apiserverMetrics(ctx)
		if err != nil {
			return err
		}
		sh := newShoot("registration-probe", awsShoot("us-east-1", "us-east-1a"))
		if err := st.c.Create(ctx, sh, dryRunAll); err != nil {
			return err
		}
		after, err := st.apiserverMetrics(ctx)
		if err != nil {
			return err
		}
		b, a := webhookCalls(before), webhookCalls(after)
		if placed := admittedSeed(sh) != ""; placed != placing {
			return fmt.Errorf("dry-run Shoot placed=%t, want %t", placed, placing)
		}
		for _, n := range hooks {
			if called := a[n] > b[n]; called != on {
				return fmt.Errorf("webhook %s called=%t by a dry-run CREATE, want %t", n, called, on)
			}
		}
		return nil
	})
}

// webhookCalls is apiserver_admission_webhook_request_total by webhook name.
func webhookCalls(samples []sample) map[string]float64 {
	out := map[string]float64{}
	for _, smp := range samples {
		if smp.name == "apiserver_admission_webhook_request_total" {
			out[smp.labels["name"]] += smp.value
		}
	}
	return out
}

// ---------------------------------------------------------------- CPU

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat (100
// on every Linux architecture Go supports).
const clockTicks = 100

// childCPU is the CPU time (user + system) of this process and of its
// children kube-apiserver, etcd and webhook (by command name), so a phase
// can say which of them its CREATEs kept busy.
func childCPU() map[string]time.Duration {
	out := map[string]time.Duration{}
	self := os.Getpid()
	if comm, _, cpu, err := procStat(self); err == nil {
		out["test ("+comm+")"] = cpu
	}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		comm, ppid, cpu, err := procStat(pid)
		if err != nil || ppid != self {
			continue
		}
		switch comm {
		case "kube-apiserver", "etcd", "webhook":
			out[comm] += cpu
		}
	}
	return out
}

// procStat reads command name, parent and CPU time from /proc/PID/stat.
func procStat(pid int) (comm string, ppid int, cpu time.Duration, err error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", 0, 0, err
	}
	s := string(raw)
	lp, rp := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if lp < 0 || rp < lp {
		return "", 0, 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	comm = s[lp+1 : rp]
	// After the name: state ppid pgrp session tty tpgid flags minflt
	// cminflt majflt cmajflt utime stime (fields 3..15 of proc(5)).
	f := strings.Fields(s[rp+1:])
	if len(f) < 13 {
		return "", 0, 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	ppid, _ = strconv.Atoi(f[1])
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	sy, _ := strconv.ParseInt(f[12], 10, 64)
	return comm, ppid, time.Duration(ut+sy) * time.Second / clockTicks, nil
}

func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// ---------------------------------------------------------------- connections

// connWatch samples the established TCP connections to a local port (the
// webhook's) every connSampleInterval until stopped: how many distinct ones
// the phase used, how many of those it opened, and the most at once. A TLS
// handshake per request would show as new connections in every sample.
type connWatch struct {
	port     int
	stop     chan struct{}
	done     chan struct{}
	mu       sync.Mutex
	seen     map[string]bool // remote address
	peak     int
	existing map[string]bool // established when the watch started
}

// connSampleInterval is coarse because reading /proc/net/tcp costs about
// 10ms of CPU on a machine with thousands of sockets in TIME_WAIT: sampled
// every 20ms, the watch itself took 60% of a core.
const connSampleInterval = 500 * time.Millisecond

func watchConns(port int) *connWatch {
	w := &connWatch{port: port, stop: make(chan struct{}), done: make(chan struct{}), seen: map[string]bool{}}
	w.existing = establishedTo(port)
	go func() {
		defer close(w.done)
		tick := time.NewTicker(connSampleInterval)
		defer tick.Stop()
		for {
			cur := establishedTo(port)
			w.mu.Lock()
			for r := range cur {
				w.seen[r] = true
			}
			w.peak = max(w.peak, len(cur))
			w.mu.Unlock()
			select {
			case <-w.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

// result stops the watch: connections used, how many of them were opened
// during the watch, and the most established at once.
func (w *connWatch) result() (used, opened, peak int) {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	for r := range w.seen {
		if !w.existing[r] {
			opened++
		}
	}
	return len(w.seen), opened, w.peak
}

// establishedTo lists the remote ends of established TCP connections whose
// local port is port (/proc/net/tcp and tcp6).
func establishedTo(port int) map[string]bool {
	out := map[string]bool{}
	local := fmt.Sprintf(":%04X", port)
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		fh, err := os.Open(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			// sl local_address rem_address st ...; st 01 is ESTABLISHED.
			fs := strings.Fields(sc.Text())
			if len(fs) > 3 && strings.HasSuffix(fs[1], local) && fs[3] == "01" {
				out[fs[2]] = true
			}
		}
		fh.Close()
	}
	return out
}
