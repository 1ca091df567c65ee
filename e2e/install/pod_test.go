package install

import (
	"context"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/seedwarden/seedwarden/e2e/proc"
)

// seedwarden's pod, played by a process: what the kubelet would do for one
// replica of the installed Deployment. The Secret and ConfigMap volumes of the
// pod template are kept in folders under root (root + mountPath), updated as
// the kubelet updates a volume (the files are links into a ..data link to a
// timestamped folder, swapped atomically), so a renewal cert-manager writes
// reaches the server as it would in a pod. The configuration is the
// ConfigMap's, with the ports on 127.0.0.1 and the paths under root; the
// kubeconfig carries a token of the pod's ServiceAccount (TokenRequest), so
// the shipped RBAC is what it may do; the egress proxy maps each port of the
// Service (<name>.<namespace>.svc:<port>) to the local port of its target.
type pod struct {
	namespace string
	root      string
	proc      *proc.Process
	ports     map[string]int // container port name -> local port
	// servingSecret is the Secret mounted at server.certDir.
	servingSecret string
	volumes       []*volumeSync
}

// volumeSyncPeriod is how often the played kubelet looks at the volumes'
// Secrets and ConfigMaps (a real one takes up to a minute or so).
const volumeSyncPeriod = 250 * time.Millisecond

// startPod starts seedwarden as the Deployment of objs runs it and waits
// until it is ready; it stops when t ends.
func startPod(t *testing.T, e *env, in *installation) *pod {
	t.Helper()
	objs := in.objs
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dep := &appsv1.Deployment{}
	must(t, fromUnstructured(selectObjects(objs, ofKind("Deployment"))[0], dep))
	tmpl := dep.Spec.Template.Spec
	container := tmpl.Containers[0]
	p := &pod{namespace: dep.Namespace, root: filepath.Join(e.dir, "pod"), ports: map[string]int{}}
	for _, port := range container.Ports {
		p.ports[port.Name] = freePort(t)
	}
	kubeconfigArg := argAfter(container.Args, "--kubeconfig")
	if kubeconfigArg != "" {
		p.provideKubeconfigSecret(ctx, t, e, tmpl, container, kubeconfigArg)
	}
	for _, m := range container.VolumeMounts {
		vol := volumeNamed(tmpl.Volumes, m.Name)
		if vol == nil || (vol.Secret == nil && vol.ConfigMap == nil) {
			continue // emptyDir: the process's own /tmp does
		}
		v := &volumeSync{e: e, namespace: dep.Namespace, vol: *vol, dir: filepath.Join(p.root, m.MountPath)}
		must(t, v.sync(ctx))
		p.volumes = append(p.volumes, v)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, v := range p.volumes {
		wg.Add(1)
		go func() { defer wg.Done(); v.loop(stop) }()
	}
	t.Cleanup(func() { close(stop); wg.Wait() })

	configPath, health := p.writeConfig(t, container)
	args := slices.Clone(container.Args)
	for i := range args {
		switch {
		case i > 0 && args[i-1] == "--config":
			args[i] = configPath
		case i > 0 && args[i-1] == "--kubeconfig":
			args[i] = p.rebasePath(args[i], container.VolumeMounts)
		}
	}
	if kubeconfigArg == "" {
		// In the cluster it would be the in-cluster config of the pod's
		// ServiceAccount.
		args = append(args, "--kubeconfig", p.writeKubeconfig(ctx, t, e, tmpl.ServiceAccountName))
	}
	var err error
	p.proc, err = proc.Start(proc.Options{Name: "seedwarden", Path: tools.webhook, Args: args, Dir: e.dir, Log: filepath.Join(e.dir, "seedwarden.log"),
		Env: []string{"POD_NAME=" + dep.Name + "-0", "POD_NAMESPACE=" + dep.Namespace}})
	must(t, err)
	t.Cleanup(func() { _, _, _ = p.proc.Stop(30 * time.Second) })
	p.routeService(ctx, t, e, objs)
	for _, host := range in.urlHosts() {
		e.proxy.route(host+":443", fmt.Sprintf("127.0.0.1:%d", p.ports["webhook"]))
	}
	must(t, p.proc.WaitFor(ctx, time.Minute, 200*time.Millisecond, func() error {
		return httpOK(probeClient, fmt.Sprintf("http://127.0.0.1:%d/readyz", health))
	}))
	return p
}

func volumeNamed(vols []corev1.Volume, name string) *corev1.Volume {
	for i := range vols {
		if vols[i].Name == name {
			return &vols[i]
		}
	}
	return nil
}

// writeConfig writes the ConfigMap's configuration with the listeners on
// this pod's local ports and every path of a volume under root; it returns
// the file and the health port.
func (p *pod) writeConfig(t *testing.T, c corev1.Container) (string, int) {
	t.Helper()
	var path string
	for i, a := range c.Args {
		if i > 0 && c.Args[i-1] == "--config" {
			path = a
		}
	}
	data, err := os.ReadFile(filepath.Join(p.root, path))
	must(t, err)
	var cfg map[string]any
	must(t, yaml.Unmarshal(data, &cfg))
	section := func(name string) map[string]any {
		m, _ := cfg[name].(map[string]any)
		if m == nil {
			m = map[string]any{}
			cfg[name] = m
		}
		return m
	}
	certDir, _ := section("server")["certDir"].(string)
	for _, m := range c.VolumeMounts {
		if m.MountPath == certDir {
			for _, v := range p.volumes {
				if v.vol.Name == m.Name && v.vol.Secret != nil {
					p.servingSecret = v.vol.Secret.SecretName
				}
			}
		}
	}
	if p.servingSecret == "" {
		t.Fatalf("no Secret volume is mounted at server.certDir %q", certDir)
	}
	section("server")["port"] = p.ports["webhook"]
	section("metrics")["bindAddress"] = fmt.Sprintf("127.0.0.1:%d", p.ports["metrics"])
	section("health")["bindAddress"] = fmt.Sprintf("127.0.0.1:%d", p.ports["health"])
	p.rebase(cfg, c.VolumeMounts)
	out, err := yaml.Marshal(cfg)
	must(t, err)
	configPath := filepath.Join(p.root, "seedwarden-config.yaml")
	must(t, os.WriteFile(configPath, out, 0o600))
	return configPath, p.ports["health"]
}

// rebase prefixes every string of v that is a path in a mounted volume with
// root.
func (p *pod) rebase(v any, mounts []corev1.VolumeMount) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok {
				x[k] = p.rebasePath(s, mounts)
			} else {
				p.rebase(e, mounts)
			}
		}
	case []any:
		for i, e := range x {
			if s, ok := e.(string); ok {
				x[i] = p.rebasePath(s, mounts)
			} else {
				p.rebase(e, mounts)
			}
		}
	}
}

func (p *pod) rebasePath(s string, mounts []corev1.VolumeMount) string {
	for _, m := range mounts {
		if s == m.MountPath || strings.HasPrefix(s, m.MountPath+"/") {
			return filepath.Join(p.root, s)
		}
	}
	return s
}

// writeKubeconfig writes a kubeconfig with a token of the ServiceAccount.
func (p *pod) writeKubeconfig(ctx context.Context, t *testing.T, e *env, sa string) string {
	t.Helper()
	path := filepath.Join(p.root, "kubeconfig")
	must(t, writeKubeconfig(path, e.cp.admin.Host, e.cp.caPEM, p.token(ctx, t, e, sa)))
	return path
}

// token is a token of the ServiceAccount sa, an hour long.
func (p *pod) token(ctx context.Context, t *testing.T, e *env, sa string) string {
	t.Helper()
	hour := int64(3600)
	tr, err := e.cs.CoreV1().ServiceAccounts(p.namespace).CreateToken(ctx, sa,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &hour}}, metav1.CreateOptions{})
	must(t, err)
	return tr.Status.Token
}

// provideKubeconfigSecret creates the Secret behind the Deployment's own
// --kubeconfig (a virtual garden's, which the operator creates,
// docs/install.md): a kubeconfig for this API server with a token of the
// pod's ServiceAccount, under the key the volume mounts at that path.
func (p *pod) provideKubeconfigSecret(ctx context.Context, t *testing.T, e *env, tmpl corev1.PodSpec, c corev1.Container, path string) {
	t.Helper()
	for _, m := range c.VolumeMounts {
		vol := volumeNamed(tmpl.Volumes, m.Name)
		if vol == nil || vol.Secret == nil || !strings.HasPrefix(path, m.MountPath+"/") {
			continue
		}
		key := strings.TrimPrefix(path, m.MountPath+"/")
		for _, it := range vol.Secret.Items {
			if it.Path == key {
				key = it.Key
			}
		}
		kc := filepath.Join(p.root, "provided.kubeconfig")
		must(t, writeKubeconfig(kc, e.cp.admin.Host, e.cp.caPEM, p.token(ctx, t, e, tmpl.ServiceAccountName)))
		data, err := os.ReadFile(kc)
		must(t, err)
		must(t, e.c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: p.namespace, Name: vol.Secret.SecretName},
			Data: map[string][]byte{key: data}}))
		return
	}
	t.Fatalf("--kubeconfig %s is in no Secret volume of the pod", path)
}

// argAfter is the argument after flag in args ("" without it).
func argAfter(args []string, flag string) string {
	for i := 1; i < len(args); i++ {
		if args[i-1] == flag {
			return args[i]
		}
	}
	return ""
}

// routeService maps every port of the Deployment's Service to the local port
// of its target port: by the Service's name and by its cluster IP, which
// kube-apiserver dials (with the name as TLS server name).
func (p *pod) routeService(ctx context.Context, t *testing.T, e *env, objs []*unstructured.Unstructured) {
	t.Helper()
	for _, u := range selectObjects(objs, ofKind("Service")) {
		svc, err := e.cs.CoreV1().Services(u.GetNamespace()).Get(ctx, u.GetName(), metav1.GetOptions{})
		must(t, err)
		for _, port := range svc.Spec.Ports {
			local, ok := p.ports[port.TargetPort.String()]
			if !ok {
				t.Fatalf("Service %s/%s port %d: target port %s is no container port (%v)", svc.Namespace, svc.Name, port.Port, port.TargetPort.String(), slices.Sorted(maps.Keys(p.ports)))
			}
			addr := fmt.Sprintf("127.0.0.1:%d", local)
			e.proxy.route(fmt.Sprintf("%s.%s.svc:%d", svc.Name, svc.Namespace, port.Port), addr)
			if svc.Spec.ClusterIP != "" && svc.Spec.ClusterIP != corev1.ClusterIPNone {
				e.proxy.route(net.JoinHostPort(svc.Spec.ClusterIP, fmt.Sprint(port.Port)), addr)
			}
		}
	}
}

func fromUnstructured(u *unstructured.Unstructured, into any) error {
	return k8sruntime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into)
}
