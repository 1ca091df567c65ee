// Command garden starts a real garden for seedwarden's e2e suite: etcd and
// kube-apiserver (envtest, binaries from KUBEBUILDER_ASSETS) and Gardener's
// gardener-apiserver in-process with its default admission plugins. It writes
// an admin kubeconfig, prints "ready <kubeconfig>" and runs until SIGINT or
// SIGTERM, then stops all three.
//
// Clients of other users impersonate them with the admin kubeconfig
// (system:masters may impersonate anyone); requests gardener-apiserver
// serves reach it through kube-apiserver's aggregator with that user.
//
// With GARDEN_PPROF_ADDR set (a loopback host:port), it serves net/http/pprof
// there, so that a benchmark can profile gardener-apiserver, which runs in
// this process (BENCHMARKS.md, the side-by-side bench).
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	_ "net/http/pprof" // served only with GARDEN_PPROF_ADDR
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"

	gardenerenvtest "github.com/gardener/gardener/test/envtest"
)

// startTimeout bounds the start of each of etcd, kube-apiserver and
// gardener-apiserver.
const startTimeout = 2 * time.Minute

// repeated is a flag that may be given several times.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, " ") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

func main() {
	// A flag set of its own: controller-runtime registers -kubeconfig in
	// the global one.
	flags := flag.NewFlagSet("garden", flag.ExitOnError)
	kubeconfig := flags.String("kubeconfig", "", "where to write the admin kubeconfig (required)")
	var kubeArgs, gardenerArgs, users repeated
	flags.Var(&kubeArgs, "kube-apiserver-arg", "an extra kube-apiserver flag as name=value, without dashes (repeatable)")
	flags.Var(&gardenerArgs, "gardener-apiserver-arg", "an extra gardener-apiserver flag as --name=value (repeatable)")
	flags.Var(&users, "user", "NAME[,GROUP...]=PATH: also write a kubeconfig of a client-certificate user to PATH (repeatable)")
	_ = flags.Parse(os.Args[1:])
	if *kubeconfig == "" {
		fmt.Fprintln(os.Stderr, "garden: -kubeconfig is required")
		os.Exit(2)
	}

	env := &gardenerenvtest.GardenerTestEnvironment{
		// envtest's default of 20 s, which gardener-apiserver inherits, is
		// too tight on a loaded 2-core machine.
		Environment:       &envtest.Environment{ControlPlaneStartTimeout: startTimeout},
		GardenerAPIServer: &gardenerenvtest.GardenerAPIServer{Args: gardenerArgs, Err: os.Stderr},
	}
	apiserver := env.ControlPlane.GetAPIServer().Configure()
	for _, a := range kubeArgs {
		name, value, ok := strings.Cut(a, "=")
		if !ok || name == "" || strings.HasPrefix(name, "-") {
			fmt.Fprintf(os.Stderr, "garden: -kube-apiserver-arg %q: want name=value, the name without dashes\n", a)
			os.Exit(2)
		}
		apiserver.Append(name, value)
	}

	if addr := os.Getenv(pprofAddrEnv); addr != "" {
		if err := servePprof(addr); err != nil {
			fmt.Fprintf(os.Stderr, "garden: %s=%q: %v\n", pprofAddrEnv, addr, err)
			os.Exit(2)
		}
	}

	// Signals that arrive while starting stop the garden as soon as it is up.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	if _, err := env.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "garden: start: %v\n", err)
		stop(env)
		os.Exit(1)
	}
	if err := writeAdminKubeconfig(env, *kubeconfig); err != nil {
		fmt.Fprintf(os.Stderr, "garden: %v\n", err)
		stop(env)
		os.Exit(1)
	}
	for _, u := range users {
		if err := writeUserKubeconfig(env, u); err != nil {
			fmt.Fprintf(os.Stderr, "garden: -user %q: %v\n", u, err)
			stop(env)
			os.Exit(1)
		}
	}
	fmt.Println("ready", *kubeconfig)
	<-sig
	if !stop(env) {
		os.Exit(1)
	}
}

// pprofAddrEnv names the loopback address to serve net/http/pprof on.
const pprofAddrEnv = "GARDEN_PPROF_ADDR"

// servePprof serves http.DefaultServeMux (where net/http/pprof registers) on
// addr, which must be a loopback address: the profiles show the garden's
// requests.
func servePprof(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("host %q is not a loopback IP", host)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	go func() { _ = http.Serve(l, nil) }() //nolint:gosec // loopback only, for the lifetime of the process
	return nil
}

// writeAdminKubeconfig writes a kubeconfig of a system:masters user.
func writeAdminKubeconfig(env *gardenerenvtest.GardenerTestEnvironment, path string) error {
	return writeKubeconfig(env, envtest.User{Name: "garden-admin", Groups: []string{"system:masters"}}, path)
}

// writeUserKubeconfig writes the kubeconfig a -user flag asks for: a user
// whose client certificate names it and its groups, for a client that
// takes no impersonation (gardener-scheduler refuses kubeconfigs with it).
func writeUserKubeconfig(env *gardenerenvtest.GardenerTestEnvironment, flag string) error {
	who, path, ok := strings.Cut(flag, "=")
	name, groups, _ := strings.Cut(who, ",")
	if !ok || name == "" || path == "" {
		return fmt.Errorf("want NAME[,GROUP...]=PATH")
	}
	user := envtest.User{Name: name}
	if groups != "" {
		user.Groups = strings.Split(groups, ",")
	}
	return writeKubeconfig(env, user, path)
}

func writeKubeconfig(env *gardenerenvtest.GardenerTestEnvironment, u envtest.User, path string) error {
	user, err := env.AddUser(u, nil)
	if err != nil {
		return fmt.Errorf("user %s: %w", u.Name, err)
	}
	data, err := user.KubeConfig()
	if err != nil {
		return fmt.Errorf("kubeconfig of %s: %w", u.Name, err)
	}
	return os.WriteFile(path, data, 0o600)
}

// stop stops gardener-apiserver, kube-apiserver and etcd; false on an error.
func stop(env *gardenerenvtest.GardenerTestEnvironment) bool {
	if err := env.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "garden: stop: %v\n", err)
		return false
	}
	return true
}
