// Package proc starts, waits for and stops the programs the end-to-end tests
// run as separate processes (the webhook, the garden, gardener-scheduler,
// etcd, kube-apiserver, cert-manager): one way to start one with its output in
// a log file, to wait until it is ready or has exited, and to stop it with
// SIGTERM and, after a grace period, SIGKILL, always reaping it.
package proc

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Options say what to run and where its output goes.
type Options struct {
	// Name names the process in errors and in the log's banner lines.
	Name string
	// Path and Args are the program and its arguments.
	Path string
	Args []string
	// Dir is the working directory (empty: the caller's).
	Dir string
	// Env is added to the caller's environment (a later entry wins).
	Env []string
	// Log is the file stdout and stderr are appended to, between banner
	// lines that say when the process started and how it ended.
	Log string
	// DeathSignal is what the process gets when the test binary dies
	// without its teardown (a panic, go test's -timeout); default SIGKILL.
	// A program that stops its own children on SIGTERM wants SIGTERM.
	DeathSignal syscall.Signal
}

// Process is one run of a program.
type Process struct {
	name    string
	log     string
	cmd     *exec.Cmd
	started time.Time
	done    chan struct{} // closed once the process has exited and been reaped
	err     error         // of cmd.Wait, valid after done
}

// Start starts the program; a goroutine reaps it when it exits.
func Start(o Options) (*Process, error) {
	if o.Name == "" {
		o.Name = o.Path
	}
	f, err := os.OpenFile(o.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%s: log file: %w", o.Name, err)
	}
	fmt.Fprintf(f, "===== e2e: %s started at %s\n", o.Name, time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(o.Path, o.Args...)
	cmd.Dir = o.Dir
	if len(o.Env) > 0 {
		cmd.Env = append(os.Environ(), o.Env...)
	}
	cmd.Stdout, cmd.Stderr = f, f
	sig := o.DeathSignal
	if sig == 0 {
		sig = syscall.SIGKILL
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: sig}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("starting %s (%s): %w", o.Name, o.Path, err)
	}
	p := &Process{name: o.Name, log: o.Log, cmd: cmd, started: time.Now(), done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		fmt.Fprintf(f, "===== e2e: %s exited at %s: %s\n", o.Name, time.Now().Format(time.RFC3339Nano), DescribeExit(p.err))
		f.Close()
		close(p.done)
	}()
	return p, nil
}

// DescribeExit says how a process ended, from the error of its Wait.
func DescribeExit(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// Name is the process's name of Options.
func (p *Process) Name() string { return p.name }

// Pid is the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Started is when the process was started.
func (p *Process) Started() time.Time { return p.started }

// LogPath is the file its output goes to.
func (p *Process) LogPath() string { return p.log }

// Done is closed once the process has exited and been reaped.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Err is the error of the process's Wait (nil: exit code 0); call after Done.
func (p *Process) Err() error { return p.err }

// ExitCode is the exit code, -1 if a signal killed it or it still runs.
func (p *Process) ExitCode() int {
	if !p.Exited() || p.cmd.ProcessState == nil {
		return -1
	}
	return p.cmd.ProcessState.ExitCode()
}

// Signal sends sig; to a process that has exited it is no error.
func (p *Process) Signal(sig os.Signal) error {
	if err := p.cmd.Process.Signal(sig); err != nil && !p.Exited() {
		return fmt.Errorf("%s: signal %s: %w", p.name, sig, err)
	}
	return nil
}

// WaitFor polls ready every interval until it returns nil, the process
// exits, timeout passes or ctx ends; the error then says which, with what
// ready said last and the log's last lines.
func (p *Process) WaitFor(ctx context.Context, timeout, interval time.Duration, ready func() error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		last := ready()
		if last == nil {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s exited before it was ready (%s); last: %v\n%s", p.name, DescribeExit(p.err), last, p.Tail(30))
		case <-ctx.Done():
			return fmt.Errorf("%s not ready within %s: %v\n%s", p.name, timeout, last, p.Tail(30))
		case <-time.After(interval):
		}
	}
}

// Stop sends SIGTERM and waits up to grace for the exit. It returns the exit
// code and how long the shutdown took; after grace it kills the process,
// reaps it and returns an error saying so. Stopping a process that has
// exited returns its exit code.
func (p *Process) Stop(grace time.Duration) (int, time.Duration, error) {
	start := time.Now()
	if p.Exited() {
		return p.ExitCode(), 0, nil
	}
	if err := p.Signal(syscall.SIGTERM); err != nil {
		return -1, 0, err
	}
	select {
	case <-p.done:
		return p.ExitCode(), time.Since(start), nil
	case <-time.After(grace):
		if err := p.Kill(); err != nil {
			return -1, time.Since(start), err
		}
		return -1, time.Since(start), fmt.Errorf("%s did not exit within %s of SIGTERM (killed)", p.name, grace)
	}
}

// killWait bounds the wait for the exit after SIGKILL.
const killWait = 10 * time.Second

// Kill ends the process at once and reaps it (a teardown).
func (p *Process) Kill() error {
	if p.Exited() {
		return nil
	}
	if err := p.Signal(syscall.SIGKILL); err != nil {
		return err
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(killWait):
		return fmt.Errorf("%s did not end within %s of SIGKILL", p.name, killWait)
	}
}

// Tail is the last n lines of the log, indented, for an error message.
func (p *Process) Tail(n int) string {
	lines, err := ReadLines(p.log, 0)
	if err != nil {
		return "  | (" + err.Error() + ")"
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "  | " + strings.Join(lines, "\n  | ")
}

// LogHas reports whether a line of the log starts with prefix.
func (p *Process) LogHas(prefix string) bool {
	lines, _ := ReadLines(p.log, 0)
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}

// ReadLines reads the lines of path from offset on.
func ReadLines(path string, offset int64) ([]string, error) {
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
