package install

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/seedwarden/seedwarden/hack/devcerts/certgen"
)

// The ServiceMonitor, translated into Prometheus's own scrape config: the
// binary is built without service discoveries (remove_all_sd), so the
// target is the Service's name and port, reached through the cluster's
// egress proxy as a Prometheus in the cluster reaches the Service; job is
// the Service's label the ServiceMonitor's jobLabel names, as the Prometheus
// Operator sets it; namespace and pod are the target labels the operator
// adds (the rules group by them).
type serviceMonitorSpec struct {
	JobLabel  string `json:"jobLabel"`
	Endpoints []struct {
		Port          string `json:"port"`
		Scheme        string `json:"scheme"`
		Path          string `json:"path"`
		ScrapeTimeout string `json:"scrapeTimeout"`
		Authorization struct {
			Type        string `json:"type"`
			Credentials struct {
				Name string `json:"name"`
				Key  string `json:"key"`
			} `json:"credentials"`
		} `json:"authorization"`
		TLSConfig struct {
			ServerName string `json:"serverName"`
			CA         struct {
				Secret struct {
					Name string `json:"name"`
					Key  string `json:"key"`
				} `json:"secret"`
			} `json:"ca"`
		} `json:"tlsConfig"`
	} `json:"endpoints"`
}

// scrapeIdentity is who Prometheus scrapes as and whom it trusts: a bearer
// token and a CA bundle (files), for the ServiceMonitor's job or one of the
// refused variants.
type scrapeIdentity struct {
	job       string
	tokenFile string // "": no authorization
	caFile    string
}

// serviceMonitorJobs are the ServiceMonitor's scrape and, for each
// identity, the same scrape with that identity instead (job named by it).
func serviceMonitorJobs(t *testing.T, objs []*unstructured.Unstructured, proxyURL string, pod string, ids []scrapeIdentity) (string, []promScrape) {
	t.Helper()
	smU := selectObjects(objs, ofKind("ServiceMonitor"))
	if len(smU) != 1 {
		t.Fatalf("%d ServiceMonitors in the installation", len(smU))
	}
	var sm struct {
		Metadata metav1.ObjectMeta  `json:"metadata"`
		Spec     serviceMonitorSpec `json:"spec"`
	}
	must(t, fromUnstructured(smU[0], &sm))
	if len(sm.Spec.Endpoints) != 1 {
		t.Fatalf("the ServiceMonitor has %d endpoints", len(sm.Spec.Endpoints))
	}
	ep := sm.Spec.Endpoints[0]
	var svc *corev1.Service
	for _, u := range selectObjects(objs, ofKind("Service")) {
		s := &corev1.Service{}
		must(t, fromUnstructured(u, s))
		if s.Namespace == sm.Metadata.Namespace && s.Labels["app.kubernetes.io/component"] == "webhook" {
			svc = s
		}
	}
	if svc == nil {
		t.Fatal("no webhook Service in the ServiceMonitor's namespace")
	}
	job := svc.Labels[sm.Spec.JobLabel]
	if job == "" {
		t.Fatalf("the Service has no label %q (the ServiceMonitor's jobLabel)", sm.Spec.JobLabel)
	}
	port := 0
	for _, p := range svc.Spec.Ports {
		if p.Name == ep.Port {
			port = int(p.Port)
		}
	}
	if port == 0 {
		t.Fatalf("the Service has no port %q", ep.Port)
	}
	target := svc.Name + "." + svc.Namespace + ".svc:" + strconv.Itoa(port)
	var jobs []promScrape
	for _, id := range ids {
		sc := promScrape{
			JobName:     id.job,
			Scheme:      ep.Scheme,
			MetricsPath: ep.Path,
			ProxyURL:    proxyURL,
			TLSConfig:   &promTLS{CAFile: id.caFile, ServerName: ep.TLSConfig.ServerName},
			StaticConfigs: []promStatic{{Targets: []string{target},
				Labels: map[string]string{"namespace": svc.Namespace, "pod": pod, "service": svc.Name, "endpoint": ep.Port}}},
		}
		if id.tokenFile != "" {
			sc.Authorization = &promAuth{Type: ep.Authorization.Type, CredentialsFile: id.tokenFile}
		}
		if id.job == "" {
			sc.JobName = job
		}
		jobs = append(jobs, sc)
	}
	return job, jobs
}

// writeServiceMonitorCA writes the CA bundle the ServiceMonitor trusts (its
// tlsConfig.ca Secret key, as cert-manager filled it) to dir.
func writeServiceMonitorCA(ctx context.Context, t *testing.T, e *env, objs []*unstructured.Unstructured, dir string) string {
	t.Helper()
	var sm struct {
		Metadata metav1.ObjectMeta  `json:"metadata"`
		Spec     serviceMonitorSpec `json:"spec"`
	}
	must(t, fromUnstructured(selectObjects(objs, ofKind("ServiceMonitor"))[0], &sm))
	ref := sm.Spec.Endpoints[0].TLSConfig.CA.Secret
	s, err := e.cs.CoreV1().Secrets(sm.Metadata.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	must(t, err)
	if len(s.Data[ref.Key]) == 0 {
		t.Fatalf("Secret %s/%s has no %s", sm.Metadata.Namespace, ref.Name, ref.Key)
	}
	path := filepath.Join(dir, "servicemonitor-ca.crt")
	must(t, os.WriteFile(path, s.Data[ref.Key], 0o600))
	return path
}

// writeToken writes a token of ServiceAccount namespace/name (TokenRequest,
// as the token Secret the ServiceMonitor names would hold one; envtest runs
// no token controller to fill that Secret).
func writeToken(ctx context.Context, t *testing.T, e *env, namespace, name, dir string) string {
	t.Helper()
	hour := int64(3600)
	tr, err := e.cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &hour}}, metav1.CreateOptions{})
	must(t, err)
	path := filepath.Join(dir, fmt.Sprintf("token-%s-%s", namespace, name))
	must(t, os.WriteFile(path, []byte(tr.Status.Token), 0o600))
	return path
}

// writeOtherCA writes a CA that signed nothing seedwarden serves.
func writeOtherCA(t *testing.T, dir string) string {
	t.Helper()
	ca, err := certgen.NewAuthority("not seedwarden's CA", timeNow())
	must(t, err)
	path := filepath.Join(dir, "other-ca.crt")
	must(t, os.WriteFile(path, ca.CertPEM, 0o600))
	return path
}

// tcpURL is the egress proxy on a TCP port as well (Prometheus's proxy_url
// takes no unix socket), with the same routes; opened once.
func (p *egressProxy) tcpURL(t *testing.T) string {
	t.Helper()
	tcpProxiesMu.Lock()
	defer tcpProxiesMu.Unlock()
	if tcpProxies[p] == "" {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		must(t, err)
		t.Cleanup(func() { l.Close() })
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				go p.tunnel(c)
			}
		}()
		tcpProxies[p] = "http://" + l.Addr().String()
	}
	return tcpProxies[p]
}

var (
	tcpProxiesMu sync.Mutex
	tcpProxies   = map[*egressProxy]string{}
)
