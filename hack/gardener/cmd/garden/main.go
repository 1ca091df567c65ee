// Command garden starts a real garden for seedwarden's e2e suite: etcd and
// kube-apiserver (envtest, binaries from KUBEBUILDER_ASSETS) and Gardener's
// gardener-apiserver in-process with its default admission plugins. It writes
// an admin kubeconfig, prints "ready" and runs until SIGINT/SIGTERM.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/gardener/gardener/test/envtest"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "where to write the admin kubeconfig (required)")
	flag.Parse()
	if *kubeconfig == "" {
		fmt.Fprintln(os.Stderr, "garden: -kubeconfig is required")
		os.Exit(2)
	}
	env := &envtest.GardenerTestEnvironment{}
	if _, err := env.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "garden: start: %v\n", err)
		os.Exit(1)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	fmt.Println("ready")
	<-sig
	if err := env.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "garden: stop: %v\n", err)
		os.Exit(1)
	}
}
