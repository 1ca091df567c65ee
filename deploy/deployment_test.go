package manifests_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
)

func TestDeployment(t *testing.T) {
	docs := manifests(t)
	cfg := shippedConfig(t)
	dep := find[*appsv1.Deployment](t, docs, "Deployment", namespace, "seedwarden")
	spec := dep.Spec.Template.Spec

	if dep.Spec.Replicas == nil || *dep.Spec.Replicas < 2 {
		t.Errorf("replicas = %v, want at least 2 (fail-closed webhooks)", deref(dep.Spec.Replicas))
	}
	if spec.PriorityClassName != "system-cluster-critical" {
		t.Errorf("priorityClassName = %q, want system-cluster-critical (fail-closed webhooks are in the write path)", spec.PriorityClassName)
	}
	if ru := dep.Spec.Strategy.RollingUpdate; ru == nil || ru.MaxUnavailable == nil || ru.MaxUnavailable.IntValue() != 0 {
		t.Error("a rollout must not take a replica away before its successor is ready (maxUnavailable 0)")
	}
	sel, err := metav1.LabelSelectorAsSelector(dep.Spec.Selector)
	if err != nil || !sel.Matches(labels.Set(dep.Spec.Template.Labels)) {
		t.Errorf("the selector does not match the pod template (%v)", err)
	}
	if spec.ServiceAccountName != "seedwarden" {
		t.Errorf("serviceAccountName = %q", spec.ServiceAccountName)
	}
	// The kubelet kills the pod after the grace period: it must cover the
	// shutdown delay and the server's graceful shutdown (25s,
	// gracefulShutdownTimeout in cmd/webhook).
	delay := shippedConfig(t).Server.ShutdownDelay.Duration
	if delay < time.Second {
		t.Errorf("server.shutdownDelay = %s: the API server's pooled connections would meet a closing server", delay)
	}
	if g, least := deref(spec.TerminationGracePeriodSeconds), int64((delay+25*time.Second)/time.Second)+1; g < least || g > 60 {
		t.Errorf("terminationGracePeriodSeconds = %d, want %d to 60 (server.shutdownDelay %s + 25s graceful shutdown + margin)", g, least, delay)
	}

	// Pod security context.
	psc := spec.SecurityContext
	if psc == nil || !deref(psc.RunAsNonRoot) || deref(psc.RunAsUser) != nonRootUserGID || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod securityContext = %+v", psc)
	}

	// Spread: preferred anti-affinity by hostname, topology spread.
	aff := spec.Affinity
	if aff == nil || aff.PodAntiAffinity == nil || len(aff.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) == 0 {
		t.Fatal("no preferred podAntiAffinity")
	}
	term := aff.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm
	if term.TopologyKey != "kubernetes.io/hostname" || !selects(t, term.LabelSelector, dep) {
		t.Errorf("podAntiAffinity term = %+v", term)
	}
	if len(aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0 {
		t.Error("required anti-affinity would leave a replica Pending on a single-node cluster")
	}
	if len(spec.TopologySpreadConstraints) == 0 || !selects(t, spec.TopologySpreadConstraints[0].LabelSelector, dep) {
		t.Error("no topologySpreadConstraints selecting the pods")
	}

	if len(spec.Containers) != 1 {
		t.Fatalf("%d containers", len(spec.Containers))
	}
	c := spec.Containers[0]
	if want := []string{"serve", "--config", configMount + "/" + configFile}; !reflect.DeepEqual(c.Args, want) {
		t.Errorf("args = %q, want %q", c.Args, want)
	}
	if c.Image == "" || strings.HasSuffix(c.Image, ":latest") || !strings.Contains(c.Image, ":") {
		t.Errorf("image %q: want a pinned tag", c.Image)
	}

	// Container security context.
	sc := c.SecurityContext
	if sc == nil {
		t.Fatal("no container securityContext")
	}
	if !deref(sc.ReadOnlyRootFilesystem) {
		t.Error("readOnlyRootFilesystem is not true")
	}
	if !deref(sc.RunAsNonRoot) || deref(sc.RunAsUser) != nonRootUserGID {
		t.Error("not runAsNonRoot with runAsUser 65532")
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Error("allowPrivilegeEscalation is not false")
	}
	if deref(sc.Privileged) {
		t.Error("privileged")
	}
	if sc.Capabilities == nil || !reflect.DeepEqual(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0 {
		t.Errorf("capabilities = %+v, want drop ALL", sc.Capabilities)
	}
	if sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Error("seccompProfile is not RuntimeDefault")
	}

	// Resources.
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, okReq := c.Resources.Requests[r]
		lim, okLim := c.Resources.Limits[r]
		if !okReq || !okLim {
			t.Errorf("%s: request and limit must both be set", r)
		} else if req.Cmp(lim) > 0 {
			t.Errorf("%s: request %s above limit %s", r, req.String(), lim.String())
		}
	}

	// Ports and probes agree with the configuration file.
	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	wantPorts := map[string]int32{
		"webhook": int32(cfg.Server.Port),
		"metrics": portOf(t, cfg.Metrics.BindAddress),
		"health":  portOf(t, cfg.Health.BindAddress),
	}
	if !reflect.DeepEqual(ports, wantPorts) {
		t.Errorf("container ports %v, want %v (from %s)", ports, wantPorts, configFile)
	}
	for name, p := range map[string]*corev1.Probe{"/readyz": c.ReadinessProbe, "/healthz": c.LivenessProbe} {
		if p == nil || p.HTTPGet == nil {
			t.Errorf("no HTTP probe for %s", name)
			continue
		}
		if p.HTTPGet.Path != name || containerPort(t, dep, p.HTTPGet.Port) != wantPorts["health"] {
			t.Errorf("probe %s: %s on %s", name, p.HTTPGet.Path, p.HTTPGet.Port.String())
		}
		if p.HTTPGet.Scheme != "" && p.HTTPGet.Scheme != corev1.URISchemeHTTP {
			t.Errorf("probe %s: scheme %s", name, p.HTTPGet.Scheme)
		}
	}

	// Volumes: the cert-manager Secret at certDir, the configuration, the
	// placement key; nothing writable but /tmp.
	vols := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		vols[v.Name] = v
	}
	mounts := map[string]corev1.VolumeMount{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = m
		if m.SubPath != "" {
			t.Errorf("mount %s uses subPath: updates (certificate renewals) would never reach it", m.MountPath)
		}
		v, ok := vols[m.Name]
		if !ok {
			t.Errorf("mount %s: no volume %s", m.MountPath, m.Name)
			continue
		}
		if v.EmptyDir == nil && !m.ReadOnly {
			t.Errorf("mount %s is writable", m.MountPath)
		}
	}
	checkSecretMount := func(path, secret string) {
		t.Helper()
		m, ok := mounts[path]
		if !ok {
			t.Errorf("nothing mounted at %s", path)
			return
		}
		v := vols[m.Name]
		if v.Secret == nil || v.Secret.SecretName != secret {
			t.Errorf("%s: want Secret %s, got %+v", path, secret, v.VolumeSource)
			return
		}
		if v.Secret.Optional != nil && *v.Secret.Optional {
			t.Errorf("%s: Secret %s must not be optional", path, secret)
		}
	}
	checkSecretMount(cfg.Server.CertDir, certSecret)
	checkSecretMount("/etc/seedwarden/placement-key", placementKey)
	if m, ok := mounts[configMount]; !ok || vols[m.Name].ConfigMap == nil || vols[m.Name].ConfigMap.Name != configName {
		t.Errorf("ConfigMap %s is not mounted at %s", configName, configMount)
	}

	// The certificate Secret is the one cert-manager writes.
	cert := findU(t, docs, "Certificate", namespace, certificate)
	if s, _, _ := unstructured.NestedString(cert.Object, "spec", "secretName"); s != certSecret {
		t.Errorf("Certificate %s writes Secret %q, the Deployment mounts %q", certificate, s, certSecret)
	}
}

func TestPodDisruptionBudget(t *testing.T) {
	docs := manifests(t)
	pdb := find[*policyv1.PodDisruptionBudget](t, docs, "PodDisruptionBudget", namespace, "seedwarden")
	dep := find[*appsv1.Deployment](t, docs, "Deployment", namespace, "seedwarden")
	if pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() != 1 || pdb.Spec.MaxUnavailable != nil {
		t.Errorf("want minAvailable 1, got %+v", pdb.Spec)
	}
	if !selects(t, pdb.Spec.Selector, dep) {
		t.Error("the PodDisruptionBudget does not select the pods")
	}
}
