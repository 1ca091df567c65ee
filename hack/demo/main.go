// Command demo sends the example Shoots to a seedwarden webhook server as the
// kube-apiserver would: an admission.k8s.io/v1 AdmissionReview for a CREATE
// of core.gardener.cloud/v1beta1 shoots, over HTTPS trusting certs/ca.crt. It
// prints what the webhook answered: allowed, the JSON patch and the warnings.
//
//	go run ./hack/demo -server "bin/webhook serve --landscape ..." [-config FILE]
//	                   [-port N] [-health-port N] [-ca certs/ca.crt] [FILE...]
//	go run ./hack/demo -url https://localhost:9443/mutate-shoots [-readyz URL] [FILE...]
//
// Without files it sends examples/shoot.yaml and examples/shoot-unschedulable.yaml
// and exits non-zero unless the first is assigned a seed and the second is
// admitted with a warning.
//
// With -server it starts its own server and stops it at the end: on free
// ports unless -port/-health-port name them, with a copy of -config whose
// ports and certificate directory it sets (the directory of -ca). With -url
// it uses a running server, once its certificate verifies against -ca; a
// server that does not is someone else's, and the demo says so.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

const (
	placeable     = "examples/shoot.yaml"
	unschedulable = "examples/shoot-unschedulable.yaml"
	webhookPath   = "/mutate-shoots"
)

type options struct {
	url, readyz, caFile string
	wait                time.Duration
	serverCmd, config   string
	serverLog           string
	port, healthPort    int
	files               []string
}

func main() {
	o, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err == nil {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err = run(ctx, o, os.Stdout)
		stop()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "demo: %v\n", err)
		os.Exit(1)
	}
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.url, "url", "", "the mutating webhook of a running server (default https://localhost:9443"+webhookPath+"); not with -server")
	fs.StringVar(&o.readyz, "readyz", "", "with -url: readiness endpoint to wait for first (empty: do not wait)")
	fs.StringVar(&o.caFile, "ca", "certs/ca.crt", "CA certificate the server's certificate must be signed by")
	fs.DurationVar(&o.wait, "wait", 30*time.Second, "how long to wait for readiness")
	fs.StringVar(&o.serverCmd, "server", "", "command (split at spaces, without --config) that starts the demo's own server; it is stopped at the end")
	fs.StringVar(&o.config, "config", "examples/config-dev.yaml", "with -server: configuration the server gets a copy of, with the demo's ports")
	fs.StringVar(&o.serverLog, "server-log", "bin/demo-server.log", "with -server: where the server's output goes")
	fs.IntVar(&o.port, "port", 0, "with -server: the webhook's port (0: a free one)")
	fs.IntVar(&o.healthPort, "health-port", 0, "with -server: the readiness probe's port (0: a free one)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	o.files = fs.Args()
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if o.serverCmd != "" {
		for _, name := range []string{"url", "readyz"} {
			if set[name] {
				return o, fmt.Errorf("-%s is for a running server; with -server the demo starts its own and knows its addresses", name)
			}
		}
		return o, nil
	}
	for _, name := range []string{"port", "health-port", "config", "server-log"} {
		if set[name] {
			return o, fmt.Errorf("-%s is for the server the demo starts: give -server too", name)
		}
	}
	if o.url == "" {
		o.url = "https://localhost:9443" + webhookPath
	}
	return o, nil
}

// run starts the demo's own server (with -server) or checks the running one,
// sends the files and stops what it started.
func run(ctx context.Context, o options, out io.Writer) error {
	pool, err := loadCA(o.caFile)
	if err != nil {
		return err
	}
	if o.serverCmd != "" {
		srv, url, cleanup, err := startOwn(ctx, o, out)
		if srv != nil {
			defer srv.stop()
		}
		defer cleanup()
		if err != nil {
			return err
		}
		o.url = url
	} else if o.readyz != "" {
		if err := waitAnswer(ctx, o.readyz, o.wait); err != nil {
			return err
		}
	}
	if err := verifyServer(ctx, o.url, o.caFile, pool); err != nil {
		return err
	}
	files, checkExamples := o.files, len(o.files) == 0
	if checkExamples {
		files = []string{placeable, unschedulable}
	}
	if problems, err := sendAll(ctx, httpsClient(pool), o.url, files, checkExamples, out); err != nil {
		return err
	} else if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// startOwn starts the server on the demo's ports and waits until it is
// ready; cleanup removes its configuration copy.
func startOwn(ctx context.Context, o options, out io.Writer) (*server, string, func(), error) {
	noop := func() {}
	p, err := resolvePorts(o.port, o.healthPort)
	if err != nil {
		return nil, "", noop, err
	}
	dir, err := os.MkdirTemp("", "seedwarden-demo-")
	if err != nil {
		return nil, "", noop, err
	}
	cleanup := func() { os.RemoveAll(dir) }
	certDir, err := filepath.Abs(filepath.Dir(o.caFile))
	if err != nil {
		return nil, "", cleanup, err
	}
	cfg, err := writeConfig(o.config, dir, certDir, p)
	if err != nil {
		return nil, "", cleanup, err
	}
	srv, err := startServer(o.serverCmd, cfg, o.serverLog, out)
	if err != nil {
		return nil, "", cleanup, err
	}
	fmt.Fprintf(out, "Its webhook: %s, readiness: %s\n\n", p.webhookURL(), p.readyzURL())
	return srv, p.webhookURL(), cleanup, srv.waitReady(ctx, p.readyzURL(), o.wait)
}

// sendAll sends each file as a review and prints the answer; with the
// examples it also checks that the first was placed and the second warned.
func sendAll(ctx context.Context, client *http.Client, url string, files []string, checkExamples bool, out io.Writer) ([]string, error) {
	var problems []string
	for i, f := range files {
		res, err := review(ctx, client, url, f)
		if err != nil {
			return nil, err
		}
		res.print(out)
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
	return problems, nil
}
