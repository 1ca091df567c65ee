package manifests_test

import (
	"path/filepath"
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The NetworkPolicy component, so that no other pod can send the webhooks
// forged reviews: a kustomize Component holding one policy that selects the
// webhook pods, restricts ingress only, admits the webhook port from the API
// servers alone and the metrics port from Prometheus alone, and leaves the
// health port to the node (kubelet).
func TestNetworkPolicyComponent(t *testing.T) {
	requireComponentOf(t, networkPolicyDir, networkPolicyFile)
	docs := readDocs(t, filepath.Join(networkPolicyDir, networkPolicyFile))
	if len(docs) != 1 {
		t.Fatalf("%d documents, want the NetworkPolicy alone", len(docs))
	}
	np := find[*networkingv1.NetworkPolicy](t, docs, "NetworkPolicy", namespace, "seedwarden")
	dep := find[*appsv1.Deployment](t, manifests(t), "Deployment", namespace, "seedwarden")
	if !selects(t, &np.Spec.PodSelector, dep) {
		t.Errorf("podSelector %v does not select the webhook pods %v", np.Spec.PodSelector, dep.Spec.Template.Labels)
	}
	if !reflect.DeepEqual(np.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}) {
		t.Errorf("policyTypes %v, want [Ingress] (egress to the API server stays open)", np.Spec.PolicyTypes)
	}

	apiServers := []networkingv1.NetworkPolicyPeer{{
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": gardenNS}},
		PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"networking.resources.gardener.cloud/to-all-webhook-targets": "allowed"}},
	}}
	prometheus := []networkingv1.NetworkPolicyPeer{{
		NamespaceSelector: &metav1.LabelSelector{},
		PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": "prometheus"}},
	}}
	want := map[string][]networkingv1.NetworkPolicyPeer{"webhook": apiServers, "metrics": prometheus}
	got := map[string][]networkingv1.NetworkPolicyPeer{}
	for i, rule := range np.Spec.Ingress {
		if len(rule.From) == 0 || len(rule.Ports) == 0 {
			t.Errorf("ingress[%d] has no peers or no ports: it would admit everyone", i)
		}
		for _, p := range rule.Ports {
			if p.Protocol == nil || *p.Protocol != corev1.ProtocolTCP || p.Port == nil {
				t.Errorf("ingress[%d]: port %+v, want a TCP port of the container", i, p)
				continue
			}
			containerPort(t, dep, *p.Port) // fails on a name the container does not have
			if _, dup := got[p.Port.String()]; dup {
				t.Errorf("port %s in two rules: the union admits more than either", p.Port.String())
			}
			got[p.Port.String()] = rule.From
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("peers by port:\n got %+v\nwant %+v", got, want)
	}
}
