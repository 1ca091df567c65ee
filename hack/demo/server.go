package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"sigs.k8s.io/yaml"
)

// choosePortsHint tells the user how to move the demo's server elsewhere.
const choosePortsHint = "choose other ports with -port and -health-port " +
	"(make demo DEMO_PORT=... DEMO_HEALTH_PORT=...), or 0 to let the demo pick free ones"

// ports are where the server the demo starts listens: the webhook on all
// interfaces (as the server binds it), probes and metrics on loopback.
type ports struct {
	webhook, health int
}

func (p ports) webhookURL() string {
	return fmt.Sprintf("https://127.0.0.1:%d%s", p.webhook, webhookPath)
}

func (p ports) readyzURL() string {
	return fmt.Sprintf("http://127.0.0.1:%d/readyz", p.health)
}

// resolvePorts picks a free port for each 0 and checks that the others are
// free, so that the server started next is the one that answers there.
func resolvePorts(webhook, health int) (ports, error) {
	if webhook != 0 && webhook == health {
		return ports{}, fmt.Errorf("-port and -health-port are both %d; %s", webhook, choosePortsHint)
	}
	var p ports
	for _, slot := range []struct {
		name string
		want int
		got  *int
	}{{"webhook", webhook, &p.webhook}, {"health", health, &p.health}} {
		port, err := claimPort(slot.name, slot.want)
		if err != nil {
			return ports{}, err
		}
		*slot.got = port
	}
	if p.webhook == p.health { // two picks may return the same released port
		return resolvePorts(webhook, health)
	}
	return p, nil
}

// claimPort binds the port on all interfaces (so a listener on any address
// conflicts) and releases it again; 0 asks the kernel for a free one.
func claimPort(name string, port int) (int, error) {
	l, err := net.Listen("tcp", ":"+strconv.Itoa(port))
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return 0, fmt.Errorf("the %s port %d is in use: something else listens there "+
				"(another seedwarden, `make run`, or another program); %s", name, port, choosePortsHint)
		}
		return 0, fmt.Errorf("the %s port %d: %w", name, port, err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// writeConfig copies the configuration in base into dir with the ports set,
// and the certificate directory set to the one holding the CA the demo
// trusts, so the server it starts serves a certificate the demo verifies.
func writeConfig(base, dir, certDir string, p ports) (string, error) {
	data, err := os.ReadFile(base)
	if err != nil {
		return "", err
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		return "", fmt.Errorf("%s: %w", base, err)
	}
	if cfg == nil {
		cfg = map[string]any{}
	}
	section(cfg, "server")["port"] = p.webhook
	section(cfg, "server")["certDir"] = certDir
	section(cfg, "health")["bindAddress"] = net.JoinHostPort("127.0.0.1", strconv.Itoa(p.health))
	// The demo does not scrape metrics; any free loopback port keeps them
	// from colliding with another server's.
	section(cfg, "metrics")["bindAddress"] = "127.0.0.1:0"
	out, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "config.json")
	return path, os.WriteFile(path, out, 0o600)
}

// section returns cfg[name] as a map, creating it when missing.
func section(cfg map[string]any, name string) map[string]any {
	m, ok := cfg[name].(map[string]any)
	if !ok {
		m = map[string]any{}
		cfg[name] = m
	}
	return m
}

type server struct {
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{} // closed when the process has exited
	out     io.Writer
}

// startServer runs command with --config appended; its output goes to logPath.
func startServer(command, configPath, logPath string, out io.Writer) (*server, error) {
	args := strings.Fields(command)
	if len(args) == 0 {
		return nil, errors.New("-server is empty")
	}
	args = append(args, "--config", configPath)
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return nil, err
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the child has its own descriptor
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the server: %w", err)
	}
	s := &server{cmd: cmd, logPath: logPath, exited: make(chan struct{}), out: out}
	go func() { _ = cmd.Wait(); close(s.exited) }()
	fmt.Fprintf(out, "Started the server (pid %d, log %s): %s\n\n", cmd.Process.Pid, logPath, strings.Join(args, " "))
	return s, nil
}

// waitReady waits for the started server's readiness endpoint; failures
// carry the end of its log.
func (s *server) waitReady(ctx context.Context, url string, wait time.Duration) error {
	if err := pollReady(ctx, url, wait, s.exited); err != nil {
		return s.withLog(err)
	}
	return nil
}

// waitAnswer waits for a running server's readiness endpoint.
func waitAnswer(ctx context.Context, url string, wait time.Duration) error {
	return pollReady(ctx, url, wait, nil)
}

// pollReady polls url until it answers 200, exited is closed (the process
// that should answer is gone), or the time is up.
func pollReady(ctx context.Context, url string, wait time.Duration, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	client := http.Client{Timeout: time.Second}
	var last error
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return fmt.Errorf("readiness endpoint %q: %w", url, err)
		}
		resp, err := client.Do(req)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("%s: %s: %s", url, resp.Status, strings.TrimSpace(string(body)))
		}
		last = err
		select {
		case <-exited:
			return errors.New("the server exited before it was ready")
		case <-ctx.Done():
			return fmt.Errorf("server not ready after %s: %w", wait, last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func (s *server) withLog(err error) error {
	return fmt.Errorf("%w\nlast lines of %s:\n%s", err, s.logPath, tail(s.logPath, 20))
}

// stop sends SIGTERM and waits, killing after 15s.
func (s *server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(15 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
	fmt.Fprintf(s.out, "Stopped the server (pid %d).\n", s.cmd.Process.Pid)
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
