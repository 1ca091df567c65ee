package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seedwarden/seedwarden/e2e/proc"
)

// The webhook as a separate process: start, stop, probes, its log, ports.

// webhookProcess is one run of `webhook serve` (e2e/proc starts, waits
// for and stops it, as every process of the e2e tests).
type webhookProcess = proc.Process

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

// startProcessWith is startProcess with another kubeconfig. If this test
// binary dies without its teardown (a panic, the -timeout of go test), the
// kernel kills the webhook too.
func (st *suite) startProcessWith(configPath, kubeconfig, logPath string) (*webhookProcess, error) {
	return proc.Start(proc.Options{Name: "webhook serve", Path: st.bin, Dir: st.work, Log: logPath,
		Args: []string{"serve", "--config", configPath, "--kubeconfig", kubeconfig}})
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
	return st.process().WaitFor(ctx, timeout, 100*time.Millisecond, func() error {
		code, body := httpStatus(st.healthURL("/readyz"))
		if code == http.StatusOK {
			return nil
		}
		return fmt.Errorf("/readyz: %d %s", code, strings.TrimSpace(body))
	})
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

func readLines(path string, offset int64) ([]string, error) { return proc.ReadLines(path, offset) }

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
