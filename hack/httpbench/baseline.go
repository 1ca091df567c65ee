package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"go.uber.org/zap/zapcore"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// Paths served by both servers.
const (
	mutateShootsPath         = "/mutate-shoots"
	validateResourceSizePath = "/validate-resource-size"
)

// baselineServer is the hidden subcommand `baseline-server`: the least a
// controller-runtime admission webhook can do. The same webhook.Server and
// TLS settings as seedwarden's (internal/server NewWebhook), and
// at both benchmarked paths a handler that allows everything without
// looking at the object. controller-runtime still reads and decodes the
// AdmissionReview (the object stays raw bytes) and encodes the answer: that
// is the floor seedwarden's figures are compared with.
func baselineServer(args []string) int {
	fs := flag.NewFlagSet("baseline-server", flag.ContinueOnError)
	port := fs.Int("port", 0, "HTTPS port")
	certDir := fs.String("cert-dir", "", "directory with tls.crt and tls.key")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *port == 0 || *certDir == "" {
		fmt.Fprintln(os.Stderr, "baseline-server: -port and -cert-dir are required")
		return 2
	}
	ctrllog.SetLogger(zap.New(zap.Level(zapcore.InfoLevel), zap.WriteTo(os.Stderr)))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	srv := newWebhookServer(*port, *certDir)
	allow := &webhook.Admission{Handler: admission.HandlerFunc(func(context.Context, admission.Request) admission.Response {
		return admission.Allowed("")
	})}
	srv.Register(mutateShootsPath, allow)
	srv.Register(validateResourceSizePath, allow)
	if err := srv.Start(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "baseline-server: %v\n", err)
		return 1
	}
	return 0
}

// newWebhookServer is cmd/webhook's newWebhookServer: TLS 1.2 or newer,
// HTTP/1.1 only, certificate and key from certDir (watched for changes).
func newWebhookServer(port int, certDir string) webhook.Server {
	return webhook.NewServer(webhook.Options{
		Port:     port,
		CertDir:  certDir,
		CertName: "tls.crt",
		KeyName:  "tls.key",
		TLSOpts: []func(*tls.Config){func(c *tls.Config) {
			c.MinVersion = tls.VersionTLS12
			c.NextProtos = []string{"http/1.1"}
		}},
	})
}
