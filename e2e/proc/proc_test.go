package proc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func start(t *testing.T, script string) *Process {
	t.Helper()
	p, err := Start(Options{Name: "sh", Path: "/bin/sh", Args: []string{"-c", script}, Log: filepath.Join(t.TempDir(), "sh.log")})
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Kill() })
	return p
}

// Stop: SIGTERM ends a process that honours it, with its exit code; one that
// ignores it is killed after the grace and Stop says so; both are reaped.
func TestStop(t *testing.T) {
	tests := []struct {
		name     string
		script   string
		wantCode int
		wantErr  bool
	}{
		{"exits on SIGTERM", `trap 'exit 3' TERM; echo up; while :; do sleep 0.05; done`, 3, false},
		{"ignores SIGTERM", `trap '' TERM; echo up; while :; do sleep 0.05; done`, -1, true},
		{"already exited", `exit 0`, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := start(t, tt.script)
			if tt.name == "already exited" {
				<-p.Done()
			} else {
				require.NoError(t, p.WaitFor(context.Background(), 5*time.Second, 20*time.Millisecond, func() error {
					if p.LogHas("up") {
						return nil
					}
					return errors.New("no line up")
				}))
			}
			code, _, err := p.Stop(300 * time.Millisecond)
			assert.Equal(t, tt.wantCode, code)
			if tt.wantErr {
				assert.ErrorContains(t, err, "did not exit within 300ms of SIGTERM (killed)")
			} else {
				assert.NoError(t, err)
			}
			assert.True(t, p.Exited())
		})
	}
}

// WaitFor returns when the process exits before it is ready, or when the
// timeout passes, saying which, with what the check said last and the log.
func TestWaitForFailures(t *testing.T) {
	notYet := func() error { return errors.New("port closed") }
	p := start(t, `echo bye; exit 2`)
	err := p.WaitFor(context.Background(), 5*time.Second, 20*time.Millisecond, notYet)
	assert.ErrorContains(t, err, "sh exited before it was ready (exit status 2); last: port closed")
	assert.ErrorContains(t, err, "  | bye")
	assert.Equal(t, 2, p.ExitCode())

	p = start(t, `sleep 5`)
	err = p.WaitFor(context.Background(), 100*time.Millisecond, 20*time.Millisecond, notYet)
	assert.ErrorContains(t, err, "sh not ready within 100ms: port closed")
	assert.Equal(t, -1, p.ExitCode(), "still running")
}

// The log holds the output between banner lines of start and exit.
func TestLogBanners(t *testing.T) {
	p := start(t, `echo hello`)
	<-p.Done()
	lines, err := ReadLines(p.LogPath(), 0)
	require.NoError(t, err)
	require.Len(t, lines, 3)
	assert.Contains(t, lines[0], "===== e2e: sh started at ")
	assert.Equal(t, "hello", lines[1])
	assert.Contains(t, lines[2], ": exit status 0")
	_, err = os.Stat(p.LogPath())
	assert.NoError(t, err)
}
