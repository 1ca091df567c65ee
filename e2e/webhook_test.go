package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/seedwarden/seedwarden/internal/config"
)

// webhookProcess is one run of `webhook serve`.
type webhookProcess struct {
	cmd     *exec.Cmd
	started time.Time
	done    chan struct{} // closed when the process has exited
	err     error         // of cmd.Wait, valid after done
}

// startWebhook starts `webhook serve --config --kubeconfig` as a separate
// process; its output is appended to logPath.
func (st *suite) startWebhook() error {
	p, err := st.startProcess(st.configPath, st.logPath)
	if err != nil {
		return err
	}
	st.procMu.Lock()
	st.proc = p
	st.procMu.Unlock()
	return nil
}

// startProcess starts `webhook serve` with configPath and the suite's
// kubeconfig, appending its output to logPath.
func (st *suite) startProcess(configPath, logPath string) (*webhookProcess, error) {
	return st.startProcessWith(configPath, st.kubeconfig, logPath)
}

// startProcessWith is startProcess with another kubeconfig.
func (st *suite) startProcessWith(configPath, kubeconfig, logPath string) (*webhookProcess, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(f, "===== e2e: webhook serve started at %s\n", time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(st.bin, "serve", "--config", configPath, "--kubeconfig", kubeconfig)
	cmd.Dir = st.work
	cmd.Stdout, cmd.Stderr = f, f
	// If this test binary dies without its teardown (a panic, the -timeout
	// of go test), the kernel kills the webhook too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("starting %s: %w", st.bin, err)
	}
	p := &webhookProcess{cmd: cmd, started: time.Now(), done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		fmt.Fprintf(f, "===== e2e: webhook serve exited at %s: %v\n", time.Now().Format(time.RFC3339Nano), describeExit(p.err))
		f.Close()
		close(p.done)
	}()
	return p, nil
}

func describeExit(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// exitCode is the process's exit code (-1 if killed by a signal); call after done.
func (p *webhookProcess) exitCode() int {
	if p.cmd.ProcessState == nil {
		return -1
	}
	return p.cmd.ProcessState.ExitCode()
}

// exited reports whether the process has ended.
func (p *webhookProcess) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// terminate sends SIGTERM and waits up to timeout for the exit. It returns
// the exit code and how long the shutdown took; after timeout it kills the
// process and returns an error.
func (p *webhookProcess) terminate(timeout time.Duration) (int, time.Duration, error) {
	start := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !p.exited() {
		return -1, 0, err
	}
	select {
	case <-p.done:
		return p.exitCode(), time.Since(start), nil
	case <-time.After(timeout):
		_ = p.kill()
		return -1, time.Since(start), fmt.Errorf("webhook did not exit within %s of SIGTERM (killed)", timeout)
	}
}

// kill ends the process at once (teardown).
func (p *webhookProcess) kill() error {
	if p.exited() {
		return nil
	}
	if err := p.cmd.Process.Kill(); err != nil && !p.exited() {
		return err
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(10 * time.Second):
		return errors.New("webhook process did not end after SIGKILL")
	}
}

func (st *suite) process() *webhookProcess {
	st.procMu.Lock()
	defer st.procMu.Unlock()
	return st.proc
}

func (st *suite) healthURL(path string) string {
	return fmt.Sprintf("http://127.0.0.1:%d%s", st.ports.health, path)
}

func (st *suite) metricsURL() string {
	return fmt.Sprintf("http://127.0.0.1:%d/metrics", st.ports.metrics)
}

func (st *suite) webhookAddr() string {
	return fmt.Sprintf("127.0.0.1:%d", st.ports.webhook)
}

var probeClient = &http.Client{Timeout: 2 * time.Second}

// httpStatus GETs url and returns the status code and body (0 and the error
// text when the request failed).
func httpStatus(url string) (int, string) {
	resp, err := probeClient.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, string(b)
}

// waitReady polls /readyz until it answers 200, the process exits, or timeout.
func (st *suite) waitReady(ctx context.Context, timeout time.Duration) error {
	p := st.process()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	last := ""
	for {
		code, body := httpStatus(st.healthURL("/readyz"))
		if code == http.StatusOK {
			return nil
		}
		last = fmt.Sprintf("%d %s", code, strings.TrimSpace(body))
		select {
		case <-p.done:
			return fmt.Errorf("webhook exited before it was ready: %s", describeExit(p.err))
		case <-ctx.Done():
			return fmt.Errorf("webhook not ready within %s; /readyz: %s", timeout, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// dumpLog writes the last n lines of the webhook's log to w.
func (st *suite) dumpLog(w io.Writer, n int) {
	if st.logPath == "" {
		return
	}
	lines, err := readLines(st.logPath, 0)
	if err != nil {
		return
	}
	if len(lines) > n {
		fmt.Fprintf(w, "e2e: webhook log (last %d of %d lines, all in %s):\n", n, len(lines), st.logPath)
		lines = lines[len(lines)-n:]
	} else {
		fmt.Fprintf(w, "e2e: webhook log (%s):\n", st.logPath)
	}
	for _, l := range lines {
		fmt.Fprintln(w, "  | "+l)
	}
}

func readLines(path string, offset int64) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, err
	}
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines, sc.Err()
}

// logOnFailure shows what the webhook logged during t if t fails.
func (st *suite) logOnFailure(t *testing.T) {
	t.Helper()
	var offset int64
	if fi, err := os.Stat(st.logPath); err == nil {
		offset = fi.Size()
	}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		lines, err := readLines(st.logPath, offset)
		if err != nil {
			t.Logf("webhook log: %v", err)
			return
		}
		const max = 150
		if len(lines) > max {
			lines = lines[len(lines)-max:]
		}
		t.Logf("webhook log during this test (last %d lines):\n  | %s", len(lines), strings.Join(lines, "\n  | "))
	})
}

// freePort is a port on 127.0.0.1 nothing listens on now, and that no
// earlier call of this run returned.
func freePort() (int, error) {
	handedOutMu.Lock()
	defer handedOutMu.Unlock()
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		// The kernel may hand a port out again once it is closed: two
		// replicas started together once got the same one, and the second
		// could not listen.
		if !handedOut[port] {
			handedOut[port] = true
			return port, nil
		}
	}
	return 0, errors.New("no free port that was not handed out before")
}

// handedOut are the ports freePort has returned in this run.
var (
	handedOutMu sync.Mutex
	handedOut   = map[int]bool{}
)

// sizeLimitConfig is the resource-size part of the webhook's configuration.
type sizeLimitConfig struct {
	limit int64 // bytes allowed for a Shoot
}

// shootSizeLimit is the e2e limit for Shoots: far above any Shoot the tests
// create (about 1 KiB), far below the oversized one.
const shootSizeLimit = 8 << 10

// sizeLimitCandidates are configuration snippets for the resource-size
// webhook (limit: 8Ki for shoots, operation mode block), in the order tried;
// the first that internal/config accepts is used. None accepted: the size
// test skips.
var sizeLimitCandidates = []string{
	`
resourceSize:
  operationMode: block
  limits:
  - apiGroups: ["core.gardener.cloud"]
    apiVersions: ["*"]
    resources: ["shoots"]
    size: 8Ki
`,
}

// capacityConfig reserves seed capacity through the API server, as
// deploy/manifests does (two replicas there), in the seedwarden namespace;
// TestCapacityAcrossReplicas runs three replicas on it.
const capacityConfig = `
capacity:
  coordination: apiserver
  reservationNamespace: seedwarden
`

// pendingConfig configures the retry controller of the webhook under test.
const pendingConfig = `
pendingShoots:
  enabled: true
  bindMode: update
  backoffBase: 30s
  backoffMax: 5m
leaderElection:
  namespace: seedwarden
  id: seedwarden-pending-shoots
`

// placementMode is placement.mode of every webhook process the suite starts
// (PlacementEnv).
var placementMode = config.PlacementViaBinding

// placementModeFromEnv reads PlacementEnv.
func placementModeFromEnv() (string, error) {
	switch v := os.Getenv(PlacementEnv); v {
	case "":
		return config.PlacementViaBinding, nil
	case config.PlacementViaBinding, config.PlacementViaPatch:
		return v, nil
	default:
		return "", fmt.Errorf("%s=%q: want %q or %q", PlacementEnv, v, config.PlacementViaBinding, config.PlacementViaPatch)
	}
}

// bindingMode reports whether the webhooks announce seeds and the retry
// controller binds them (placement.mode binding).
func bindingMode() bool { return placementMode == config.PlacementViaBinding }

// webhookConfig is the configuration file of the webhook under test.
//
// reservationTTL is short: a placement whose Shoot is then refused by a
// validating webhook holds its seed's slot until the TTL, which would skew
// the comparisons with `webhook simulate` for 30s (the default).
//
// Seed capacity is reserved through the API server (ConfigMaps in the
// seedwarden namespace), as in deploy/manifests.
//
// The retry controller binds by update (the CRDs have no binding
// subresource) and backs off from 30s: a pending Shoot bound within seconds
// of a Seed change was bound because of that change, not by a timed retry.
// Its Lease is in the seedwarden namespace, as in a real installation.
//
// Settings of webhooks still being written are added only when
// internal/config accepts them, so the suite runs while they land.
func webhookConfig(p ports, certDir, work string) (string, *sizeLimitConfig, error) {
	base := fmt.Sprintf(`apiVersion: %s
kind: %s
reservationTTL: 5s
server:
  port: %d
  certDir: %s
  # Only kube-apiserver's certificate is accepted (clientauth_test.go).
  clientAuth:
    caFile: %s
    allowedNames: [%s]
metrics:
  # Plain HTTP, so loopback only: the tests read it without a token.
  bindAddress: "127.0.0.1:%d"
  secure: false
health:
  bindAddress: "127.0.0.1:%d"
log:
  level: info
  format: json
`, config.APIVersion, config.Kind, p.webhook, certDir, clientCAFile(work), apiserverClientName, p.metrics, p.health)
	if _, err := config.Parse([]byte(base)); err != nil {
		return "", nil, fmt.Errorf("the e2e configuration is no longer valid (update e2e/webhook_test.go): %w", err)
	}
	accepted := func(snippet string) bool {
		_, err := config.Parse([]byte(base + snippet))
		return err == nil
	}
	// The HMAC key of the placement token (binding webhook) and the
	// placement mode (PlacementEnv).
	placement := fmt.Sprintf("placement:\n  keyFile: %s\n  mode: %s\n", placementKeyFile(work), placementMode)
	if _, err := config.Parse([]byte(base + placement)); err != nil {
		return "", nil, fmt.Errorf("placement configuration: %w", err)
	}
	base += placement
	// Capacity across replicas.
	if accepted(capacityConfig) {
		base += capacityConfig
	} else {
		logf("internal/config has no capacity.coordination: each replica reserves in its own memory")
	}
	// The retry controller (pendingShoots) and its leader election.
	pc := pendingConfig
	if onGardener() {
		// gardener-apiserver refuses any change of spec.seedName through the
		// Shoot itself: the retry controller binds through shoots/binding.
		pc = strings.Replace(pc, "bindMode: update", "bindMode: binding", 1)
	}
	if accepted(pc) {
		base += pc
	} else {
		logf("internal/config has no pendingShoots/leaderElection: the retry controller runs with its defaults, if at all")
	}
	for _, c := range sizeLimitCandidates {
		if accepted(c) {
			logf("resource size limit configured: shoots %d bytes", shootSizeLimit)
			return base + c, &sizeLimitConfig{limit: shootSizeLimit}, nil
		}
	}
	logf("internal/config accepts none of the resource-size snippets: no size limit configured")
	return base, nil, nil
}
