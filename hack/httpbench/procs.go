package main

// The two server processes a run starts, and the probes that see them ready.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

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
	return startProcEnv(name, logPath, nil, bin, args...)
}

// startProcEnv starts bin with env added to this process's environment.
func startProcEnv(name, logPath string, env []string, bin string, args ...string) (*proc, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the child has its own descriptor
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
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
