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
)

// The webhook as a separate process: start, stop, probes, its log, ports.

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
