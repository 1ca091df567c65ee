package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/internal/config"
	"github.com/seedwarden/seedwarden/internal/handlers"
	"github.com/seedwarden/seedwarden/internal/ratelog"
)

// serveProcessEnv holds the arguments of `webhook serve` (JSON) when this
// test binary runs as the server process of TestClientErrorsLogNoStacks.
const serveProcessEnv = "SEEDWARDEN_TEST_SERVE_PROCESS"

// TestServeProcess is not a test: it is `webhook serve` with the process-wide
// loggers of main (controller-runtime's can be set once per process only),
// run by TestClientErrorsLogNoStacks in a process of its own. It serves
// until its standard input closes.
func TestServeProcess(t *testing.T) {
	raw := os.Getenv(serveProcessEnv)
	if raw == "" {
		return
	}
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(exitUsage)
	}
	setLogger = setProcessLogger
	ctx, stop := context.WithCancel(context.Background())
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		stop()
	}()
	os.Exit(run(ctx, args, io.Discard, os.Stderr))
}

// An error logged by the production logger carries no stack trace.
func TestLoggerErrorsCarryNoStack(t *testing.T) {
	for _, format := range []string{"json", "console"} {
		var buf bytes.Buffer
		newLogger(config.Log{Level: "info", Format: format}, &buf).Error(errors.New("boom"), "Something failed")
		assert.Equal(t, 1, strings.Count(buf.String(), "\n"), "%s: one line: %s", format, buf.String())
		assert.NotContains(t, buf.String(), "stacktrace", format)
		assert.NotContains(t, buf.String(), ".go:", format)
	}
}

// TestClientErrorsLogNoStacks sends 5,000 bodies no webhook can take (none,
// not JSON, cut short, another content type, JSON that is no review) to
// every webhook path of a `webhook serve --landscape` process logging as in
// production (console format, where a stack costs a line per frame). The
// log gets no stack and no line per request: the lines the flood adds are
// the thinned-out rejections, a burst and then one a second.
func TestClientErrorsLogNoStacks(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	certDir := devCertDir(t)
	port, healthPort := freePort(t), freePort(t)
	cfg := writeFile(t, "config.yaml", configHeader+fmt.Sprintf(`
server: {port: %d, certDir: %s}
metrics: {bindAddress: "0"}
health: {bindAddress: "127.0.0.1:%d"}
log: {format: console}
placement: {keyFile: %s}
`, port, certDir, healthPort, placementKeyFile(t)))
	log, stop := startServeProcess(t, healthPort, "--config", cfg, "--landscape", "../../examples/landscape.yaml")
	linesAtStart := strings.Count(log.String(), "\n")

	paths := []string{handlers.MutateShootsPath, handlers.WebhookBindingPath, handlers.WebhookCapacityPath, handlers.WebhookSeedPath,
		handlers.WebhookResourceSizePath, handlers.WebhookKubeconfigSecretPath, handlers.WebhookNamespaceDeletionPath}
	bodies := []struct{ contentType, body string }{
		{"application/json", ""},
		{"application/json", "not json"},
		{"application/json", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionRev`},
		{"text/plain", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`},
		{"application/json", `[1,2,3]`},
		{"application/json", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":1}}`},
	}
	const requests = 5000
	client := devClient(t, certDir)
	start := time.Now()
	codes := sendConcurrently(t, requests, 8, func(i int) (int, error) {
		b := bodies[i%len(bodies)]
		url := fmt.Sprintf("https://localhost:%d%s", port, paths[(i/len(bodies))%len(paths)])
		resp, err := client.Post(url, b.contentType, strings.NewReader(b.body))
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		_, err = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, err
	})
	elapsed := time.Since(start)
	assert.Equal(t, map[int]int{http.StatusOK: requests}, codes, "every body is answered with an error review")
	stop()

	out := log.String()
	assert.NotContains(t, out, "stacktrace")
	assert.NotContains(t, out, ".go:", "no stack frame")
	assert.NotContains(t, out, "\tERROR\t", "a client's error is no server error")
	added := strings.Count(out, "\n") - linesAtStart
	// The burst, one a second, and the lines of shutting down.
	limit := ratelog.DefaultBurst + int(elapsed.Seconds()) + 1 + 20
	assert.LessOrEqual(t, added, limit, "%d requests in %s", requests, elapsed)
	assert.Contains(t, out, "unable to decode the request", "controller-runtime's refusals are logged, thinned out")
	t.Logf("%d bad requests in %s: %d log lines (limit %d), no stack", requests, elapsed.Round(time.Millisecond), added, limit)
}

// startServeProcess runs `webhook serve args...` as TestServeProcess in a
// process of its own and waits for /readyz; stop ends it and waits for it.
func startServeProcess(t *testing.T, healthPort int, args ...string) (log *syncBuffer, stop func()) {
	t.Helper()
	raw, err := json.Marshal(args)
	require.NoError(t, err)
	cmd := exec.Command(os.Args[0], "-test.run=^TestServeProcess$")
	cmd.Env = append(os.Environ(), serveProcessEnv+"="+string(raw))
	log = &syncBuffer{}
	cmd.Stderr = log
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	done := make(chan int, 1)
	go func() {
		_ = cmd.Wait()
		done <- cmd.ProcessState.ExitCode()
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			_ = stdin.Close()
			select {
			case code := <-done:
				assert.Equal(t, exitOK, code, log.String())
			case <-time.After(30 * time.Second):
				_ = cmd.Process.Kill()
				t.Error("server process did not stop")
			}
		})
	}
	t.Cleanup(stop)
	waitReady(t, fmt.Sprintf("http://127.0.0.1:%d/readyz", healthPort), 30*time.Second, done, log)
	return log, stop
}

// sendConcurrently calls send(0..n-1) from workers goroutines and counts the
// status codes; an error fails the test.
func sendConcurrently(t *testing.T, n, workers int, send func(i int) (int, error)) map[int]int {
	t.Helper()
	var mu sync.Mutex
	codes := map[int]int{}
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				code, err := send(i)
				mu.Lock()
				if err != nil {
					t.Errorf("request %d: %v", i, err)
				}
				codes[code]++
				mu.Unlock()
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return codes
}
