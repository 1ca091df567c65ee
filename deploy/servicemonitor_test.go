package manifests_test

import (
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
)

func TestServiceMonitor(t *testing.T) {
	docs := manifests(t)
	sm := findU(t, docs, "ServiceMonitor", namespace, "seedwarden")
	svc := find[*corev1.Service](t, docs, "Service", namespace, serviceName)
	eps, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	if len(eps) != 1 {
		t.Fatalf("%d endpoints", len(eps))
	}
	ep := eps[0].(map[string]any)
	// authorization, not the deprecated bearerTokenFile: the token of the
	// scraper's ServiceAccount, from its token Secret.
	wantAuth := map[string]any{"type": "Bearer", "credentials": map[string]any{"name": metricsToken, "key": "token"}}
	if ep["scheme"] != "https" || !reflect.DeepEqual(ep["authorization"], wantAuth) || ep["bearerTokenFile"] != nil {
		t.Errorf("endpoint = %v: want HTTPS with authorization %v", ep, wantAuth)
	}
	secret := find[*corev1.Secret](t, docs, "Secret", namespace, metricsToken)
	if secret.Type != corev1.SecretTypeServiceAccountToken || secret.Annotations[corev1.ServiceAccountNameKey] != metricsScraper {
		t.Errorf("Secret %s: type %s, for ServiceAccount %q; want a token of %s", metricsToken, secret.Type, secret.Annotations[corev1.ServiceAccountNameKey], metricsScraper)
	}
	var metricsPort *corev1.ServicePort
	for i := range svc.Spec.Ports {
		if svc.Spec.Ports[i].Name == ep["port"] {
			metricsPort = &svc.Spec.Ports[i]
		}
	}
	if metricsPort == nil {
		t.Fatalf("the Service has no port %v", ep["port"])
	}
	dep := find[*appsv1.Deployment](t, docs, "Deployment", namespace, "seedwarden")
	if got, want := containerPort(t, dep, metricsPort.TargetPort), portOf(t, shippedConfig(t).Metrics.BindAddress); got != want {
		t.Errorf("metrics: Service -> container port %d, the server listens on %d", got, want)
	}
	ml, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
	if !labels.SelectorFromSet(ml).Matches(labels.Set(svc.Labels)) {
		t.Error("the ServiceMonitor does not select the Service")
	}
}
