// Command demo sends the example Shoots to a running seedwarden webhook server
// as the kube-apiserver would: an admission.k8s.io/v1 AdmissionReview for a
// CREATE of core.gardener.cloud/v1beta1 shoots, over HTTPS trusting
// certs/ca.crt. It prints what the webhook answered: allowed, the JSON patch
// and the warnings.
//
//	go run ./hack/demo [-url https://localhost:9443/mutate-shoots] [-ca certs/ca.crt]
//	                   [-server "bin/webhook serve --landscape ..."] [FILE...]
//
// Without files it sends examples/shoot.yaml and examples/shoot-unschedulable.yaml
// and exits non-zero unless the first is assigned a seed and the second is
// admitted with a warning.
//
// With -server, a server that is not answering yet is started with that
// command (its log goes to -server-log) and stopped again at the end; a server
// that already answers is used as it is.
package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	"sigs.k8s.io/yaml"
)

const (
	placeable     = "examples/shoot.yaml"
	unschedulable = "examples/shoot-unschedulable.yaml"
)

func main() {
	url := flag.String("url", "https://localhost:9443/mutate-shoots", "the mutating webhook's URL")
	caFile := flag.String("ca", "certs/ca.crt", "CA certificate to trust the server with")
	readyz := flag.String("readyz", "http://localhost:8081/readyz", "readiness endpoint to wait for (empty: do not wait)")
	wait := flag.Duration("wait", 30*time.Second, "how long to wait for readiness")
	serverCmd := flag.String("server", "", "command (split at spaces) that starts the server if -readyz does not answer; it is stopped at the end")
	serverLog := flag.String("server-log", "bin/demo-server.log", "where the output of a server started by -server goes")
	flag.Parse()

	started := startIfNeeded(*serverCmd, *serverLog, *readyz)
	defer stopServer()

	files := flag.Args()
	checkExamples := len(files) == 0
	if checkExamples {
		files = []string{placeable, unschedulable}
	}
	client, err := httpsClient(*caFile)
	if err != nil {
		fail(err)
	}
	if *readyz != "" {
		if err := waitReady(*readyz, *wait); err != nil {
			if started != nil {
				err = fmt.Errorf("%w\nlast lines of %s:\n%s", err, started.logPath, tail(started.logPath, 20))
			}
			fail(err)
		}
	}

	if problems := sendAll(client, *url, files, checkExamples); len(problems) > 0 {
		fail(errors.New(strings.Join(problems, "; ")))
	}
}

// startIfNeeded starts the server command unless readyz already answers; the
// server it starts is stopped on exit, on failure and on a signal.
func startIfNeeded(serverCmd, serverLog, readyz string) *server {
	if serverCmd == "" || readyz == "" {
		return nil
	}
	if answers(readyz) {
		fmt.Printf("Using the server that is already running (%s answers).\n\n", readyz)
		return nil
	}
	srv, err := startServer(serverCmd, serverLog)
	if err != nil {
		fail(err)
	}
	// fail exits without running deferred calls: stop the server there too.
	stopServer = srv.stop
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-signals
		srv.stop()
		os.Exit(1)
	}()
	return srv
}

// sendAll sends each file as a review and prints the answer; with the
// examples it also checks that the first was placed and the second warned.
func sendAll(client *http.Client, url string, files []string, checkExamples bool) []string {
	var problems []string
	for i, f := range files {
		res, err := review(client, url, f)
		if err != nil {
			fail(err)
		}
		res.print(os.Stdout)
		if !checkExamples {
			continue
		}
		switch {
		case i == 0 && res.seed == "":
			problems = append(problems, fmt.Sprintf("%s was not assigned a seed", f))
		case i == 1 && len(res.warnings) == 0:
			problems = append(problems, fmt.Sprintf("%s got no warning", f))
		}
	}
	return problems
}

// stopServer stops a server the demo started, if any.
var stopServer = func() {}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "demo: %v\n", err)
	stopServer()
	os.Exit(1)
}

// answers reports whether url answers 200 right now.
func answers(url string) bool {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
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

type server struct {
	cmd     *exec.Cmd
	logPath string
	once    sync.Once
}

func startServer(command, logPath string) (*server, error) {
	args := strings.Fields(command)
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return nil, err
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting the server: %w", err)
	}
	logFile.Close() // the child has its own descriptor
	fmt.Printf("Started the server (pid %d, log %s): %s\n\n", cmd.Process.Pid, logPath, command)
	return &server{cmd: cmd, logPath: logPath}, nil
}

// stop sends SIGTERM and waits (killing after 15s); it runs once.
func (s *server) stop() {
	s.once.Do(func() {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = s.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = s.cmd.Process.Kill()
			<-done
		}
		fmt.Printf("Stopped the server (pid %d).\n", s.cmd.Process.Pid)
	})
}

func httpsClient(caFile string) (*http.Client, error) {
	caPEM, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("%w (generate it with: go run ./hack/devcerts)", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("%s holds no PEM certificate", caFile)
	}
	return &http.Client{
		Timeout:   10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}},
	}, nil
}

// waitReady polls url until it answers 200 or the time is up.
func waitReady(url string, wait time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	var last error
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
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
		case <-ctx.Done():
			return fmt.Errorf("server not ready after %s: %w", wait, last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

type result struct {
	file, namespace, name string
	allowed               bool
	message               string
	patch                 []map[string]any
	seed                  string
	warnings              []string
}

// review sends the Shoot in file as a CREATE AdmissionReview.
func review(client *http.Client, url, file string) (*result, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	obj, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	var meta struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
	}
	if err := json.Unmarshal(obj, &meta); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	shoots := metav1.GroupVersionResource{Group: "core.gardener.cloud", Version: "v1beta1", Resource: "shoots"}
	shootKind := metav1.GroupVersionKind{Group: "core.gardener.cloud", Version: "v1beta1", Kind: "Shoot"}
	dryRun := false
	in := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID:             uuid.NewUUID(),
			Kind:            shootKind,
			Resource:        shoots,
			RequestKind:     &shootKind,
			RequestResource: &shoots,
			Name:            meta.Metadata.Name,
			Namespace:       meta.Metadata.Namespace,
			Operation:       admissionv1.Create,
			UserInfo: authenticationv1.UserInfo{
				Username: "alice@example.com",
				Groups:   []string{"system:authenticated"},
			},
			Object:  runtime.RawExtension{Raw: obj},
			DryRun:  &dryRun,
			Options: runtime.RawExtension{Raw: []byte(`{"kind":"CreateOptions","apiVersion":"meta.k8s.io/v1"}`)},
		},
	}
	body, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	resp, err := client.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	respBody, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s: %s", file, resp.Status, strings.TrimSpace(string(respBody)))
	}
	var out admissionv1.AdmissionReview
	if err := json.Unmarshal(respBody, &out); err != nil {
		return nil, fmt.Errorf("%s: response is not an AdmissionReview: %w", file, err)
	}
	r := out.Response
	if r == nil || r.UID != in.Request.UID {
		return nil, fmt.Errorf("%s: response does not answer request %s", file, in.Request.UID)
	}
	res := &result{file: file, namespace: meta.Metadata.Namespace, name: meta.Metadata.Name, allowed: r.Allowed, warnings: r.Warnings}
	if r.Result != nil {
		res.message = r.Result.Message
	}
	if len(r.Patch) > 0 {
		if err := json.Unmarshal(r.Patch, &res.patch); err != nil {
			return nil, fmt.Errorf("%s: patch is not a JSON patch: %w", file, err)
		}
		res.seed = seedFromPatch(res.patch)
	}
	return res, nil
}

// seedFromPatch finds the seed name the patch sets.
func seedFromPatch(patch []map[string]any) string {
	for _, op := range patch {
		switch op["path"] {
		case "/spec/seedName":
			s, _ := op["value"].(string)
			return s
		case "/spec":
			if spec, ok := op["value"].(map[string]any); ok {
				s, _ := spec["seedName"].(string)
				return s
			}
		}
	}
	return ""
}

func (r *result) print(w io.Writer) {
	fmt.Fprintf(w, "%s (Shoot %s/%s)\n", r.file, r.namespace, r.name)
	fmt.Fprintf(w, "  allowed:  %t\n", r.allowed)
	if r.message != "" {
		fmt.Fprintf(w, "  message:  %s\n", r.message)
	}
	if len(r.patch) == 0 {
		fmt.Fprintln(w, "  patch:    none")
	} else {
		fmt.Fprintln(w, "  patch:")
		for _, op := range r.patch {
			b, _ := json.Marshal(op)
			fmt.Fprintf(w, "    %s\n", b)
		}
	}
	if r.seed != "" {
		fmt.Fprintf(w, "  seed:     %s\n", r.seed)
	}
	if len(r.warnings) == 0 {
		fmt.Fprintln(w, "  warnings: none")
	} else {
		fmt.Fprintln(w, "  warnings:")
		for _, s := range r.warnings {
			fmt.Fprintf(w, "    %s\n", s)
		}
	}
	fmt.Fprintln(w)
}
