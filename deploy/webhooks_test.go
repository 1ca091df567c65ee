package manifests_test

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

// Webhook paths the server registers (cmd/webhook). A webhook configuration
// pointing anywhere else would get 404s, which fail closed.
const (
	pathMutateShoots        = "/mutate-shoots"
	pathShootSeed           = "/validate-shoot-seed"
	pathResourceSize        = "/validate-resource-size"
	pathKubeconfigSecret    = "/validate-kubeconfig-secret"
	pathNamespaceDeletion   = "/validate-namespace-deletion"
	pathSeedAutoscaler      = "/validate-seed-autoscaler"
	gardenerGroup           = "core.gardener.cloud"
	gardenerVersion         = "v1beta1"
	mutatingConfiguration   = "MutatingWebhookConfiguration"
	validatingConfiguration = "ValidatingWebhookConfiguration"
	seedWebhook             = "seed.shoots.seedwarden.io"
)

// rule is one admission rule, flattened for comparison.
type rule struct {
	group, version, resource string
	ops                      string // sorted, comma-separated
	scope                    admissionregistrationv1.ScopeType
}

// webhookWant is what each webhook must declare.
type webhookWant struct {
	config       string
	path         string
	failure      admissionregistrationv1.FailurePolicyType
	sideEffects  admissionregistrationv1.SideEffectClass
	maxTimeout   int32
	rules        []rule
	excludedAlso []string // namespaces excluded besides seedwarden
	// projectsOnly: the webhook selects project namespaces by Gardener's
	// label, as gardener-admission-controller's size limits do, so that an
	// outage never blocks Gardener's own namespaces.
	projectsOnly bool
	// conditions are the names of the matchConditions, in order.
	conditions []string
}

// The matchConditions, exactly as deploy/manifests and the chart write them
// (folded YAML: the lines joined by spaces). matchconditions_test.go
// evaluates them as the API server does; a real API server compiles them in
// TestAPIServerAcceptsManifests.
const (
	// seedChangeCondition: the request sets, changes or unsets
	// spec.seedName (on CREATE: names a seed at all).
	seedChangeCondition = "object.?spec.?seedName.orValue('') != " +
		"(request.operation == 'UPDATE' ? oldObject.?spec.?seedName.orValue('') : '')"
	// seedConstraintCondition is the seed webhook's: a binding, a seed
	// change, or an UPDATE of a Shoot with a seed that changes what that
	// seed must offer (spec.seedSelector, control-plane zones, region).
	seedConstraintCondition = "request.?subResource.orValue('') == 'binding' || " + seedChangeCondition + " || " +
		"(request.operation == 'UPDATE' && oldObject.?spec.?seedName.orValue('') != '' && " +
		"(object.?spec.?seedSelector != oldObject.?spec.?seedSelector || " +
		"object.?spec.?controlPlane.?zones != oldObject.?spec.?controlPlane.?zones || " +
		"object.?spec.?region.orValue('') != oldObject.?spec.?region.orValue('')))"
	// annotationChangeCondition is the UPDATE mutating webhook's: UPDATEs
	// that add or change a seedwarden.io/* annotation.
	annotationChangeCondition = "object.?metadata.?annotations.orValue({}).exists(k, k.startsWith('seedwarden.io/') && " +
		"oldObject.?metadata.?annotations[?k] != object.?metadata.?annotations[?k])"
	// notOwnBindCondition leaves out the requests of seedwarden's own
	// ServiceAccount: the retry controller checks before it binds.
	notOwnBindCondition = "request.userInfo.username != 'system:serviceaccount:" + namespace + ":seedwarden'"
)

// conditionExpressions are the matchConditions by name.
var conditionExpressions = map[string]string{
	"may-affect-seed":              seedConstraintCondition,
	"seedwarden-annotation-change": annotationChangeCondition,
	"not-seedwardens-own-bind":     notOwnBindCondition,
}

var shootRules = []rule{
	{gardenerGroup, gardenerVersion, "shoots", "CREATE,UPDATE", admissionregistrationv1.NamespacedScope},
	{gardenerGroup, gardenerVersion, "shoots/binding", "UPDATE", admissionregistrationv1.NamespacedScope},
}

var webhooks = map[string]webhookWant{
	// Every CREATE, without conditions (each would convert the Shoot for
	// nothing): placement reserves, so NoneOnDryRun.
	"place.shoots.seedwarden.io": {
		config: mutatingConfiguration, path: pathMutateShoots,
		failure: admissionregistrationv1.Ignore, sideEffects: admissionregistrationv1.SideEffectClassNoneOnDryRun, maxTimeout: 5,
		rules: []rule{{gardenerGroup, gardenerVersion, "shoots", "CREATE", admissionregistrationv1.NamespacedScope}},
	},
	// The same handler for UPDATEs that touch seedwarden's annotations: it
	// reverts them and reserves nothing.
	"annotations.shoots.seedwarden.io": {
		config: mutatingConfiguration, path: pathMutateShoots,
		failure: admissionregistrationv1.Ignore, sideEffects: admissionregistrationv1.SideEffectClassNone, maxTimeout: 5,
		rules:      []rule{{gardenerGroup, gardenerVersion, "shoots", "UPDATE", admissionregistrationv1.NamespacedScope}},
		conditions: []string{"seedwarden-annotation-change"},
	},
	// The binding and the capacity checks behind one registration: one
	// condition evaluation and one call per request instead of two.
	seedWebhook: {
		config: validatingConfiguration, path: pathShootSeed,
		failure: admissionregistrationv1.Fail, sideEffects: admissionregistrationv1.SideEffectClassNoneOnDryRun, maxTimeout: 5,
		rules: shootRules, conditions: []string{"may-affect-seed", "not-seedwardens-own-bind"},
	},
	// Shoots apart, failing open: an outage must not refuse a Shoot that
	// chooses no seed.
	"size.shoots.seedwarden.io": {
		config: validatingConfiguration, path: pathResourceSize,
		failure: admissionregistrationv1.Ignore, sideEffects: admissionregistrationv1.SideEffectClassNoneOnDryRun, maxTimeout: 5,
		rules:        []rule{{gardenerGroup, gardenerVersion, "shoots", "CREATE,UPDATE", admissionregistrationv1.NamespacedScope}},
		projectsOnly: true,
		conditions:   []string{"not-seedwardens-own-bind"},
	},
	"size.seedwarden.io": {
		config: validatingConfiguration, path: pathResourceSize,
		failure: admissionregistrationv1.Fail, sideEffects: admissionregistrationv1.SideEffectClassNoneOnDryRun, maxTimeout: 5,
		rules: []rule{
			{gardenerGroup, gardenerVersion, "projects", "CREATE,UPDATE", admissionregistrationv1.AllScopes},
			{gardenerGroup, gardenerVersion, "seeds", "CREATE,UPDATE", admissionregistrationv1.AllScopes},
			{"", "v1", "configmaps", "CREATE,UPDATE", admissionregistrationv1.NamespacedScope},
			{"", "v1", "secrets", "CREATE,UPDATE", admissionregistrationv1.NamespacedScope},
		},
		projectsOnly: true,
	},
	"kubeconfig.secrets.seedwarden.io": {
		config: validatingConfiguration, path: pathKubeconfigSecret,
		failure: admissionregistrationv1.Fail, sideEffects: admissionregistrationv1.SideEffectClassNoneOnDryRun, maxTimeout: 5,
		rules:        []rule{{"", "v1", "secrets", "CREATE,UPDATE", admissionregistrationv1.NamespacedScope}},
		excludedAlso: []string{"kube-system", "cert-manager"},
		conditions:   []string{"has-kubeconfig"},
	},
	"seedautoscalers.autoscaling.seedwarden.io": {
		config: validatingConfiguration, path: pathSeedAutoscaler,
		failure: admissionregistrationv1.Fail, sideEffects: admissionregistrationv1.SideEffectClassNone, maxTimeout: 5,
		rules:        []rule{{"autoscaling.seedwarden.io", "v1alpha1", "seedautoscalers", "CREATE,UPDATE", admissionregistrationv1.NamespacedScope}},
		excludedAlso: []string{"kube-system", "cert-manager"},
	},
	"namespaces.seedwarden.io": {
		config: validatingConfiguration, path: pathNamespaceDeletion,
		failure: admissionregistrationv1.Fail, sideEffects: admissionregistrationv1.SideEffectClassNoneOnDryRun, maxTimeout: 5,
		rules: []rule{{"", "v1", "namespaces", "DELETE", admissionregistrationv1.ClusterScope}},
	},
}

func TestWebhookConfigurations(t *testing.T) {
	docs := manifests(t)
	mwc := find[*admissionregistrationv1.MutatingWebhookConfiguration](t, docs, mutatingConfiguration, "", "seedwarden")
	vwc := find[*admissionregistrationv1.ValidatingWebhookConfiguration](t, docs, validatingConfiguration, "", "seedwarden")
	sizes := resourceSizeConfiguration(t)
	svc := find[*corev1.Service](t, docs, "Service", namespace, serviceName)
	cert := findU(t, docs, "Certificate", namespace, certificate)

	for _, obj := range []metav1.Object{mwc, vwc, sizes} {
		if got := obj.GetAnnotations()[injectCAFrom]; got != namespace+"/"+certificate {
			t.Errorf("%s: %s = %q", obj.GetName(), injectCAFrom, got)
		}
	}
	dnsNames, _, _ := unstructured.NestedStringSlice(cert.Object, "spec", "dnsNames")
	for _, n := range []string{serviceName + "." + namespace + ".svc", serviceName + "." + namespace + ".svc.cluster.local"} {
		if !slices.Contains(dnsNames, n) {
			t.Errorf("certificate %s lacks dnsName %s", certificate, n)
		}
	}

	type common struct {
		name, config string
		cc           admissionregistrationv1.WebhookClientConfig
		rules        []admissionregistrationv1.RuleWithOperations
		failure      *admissionregistrationv1.FailurePolicyType
		matchPolicy  *admissionregistrationv1.MatchPolicyType
		nsSel        *metav1.LabelSelector
		objSel       *metav1.LabelSelector
		sideEffects  *admissionregistrationv1.SideEffectClass
		timeout      *int32
		versions     []string
		conds        []admissionregistrationv1.MatchCondition
	}
	var all []common
	for _, w := range mwc.Webhooks {
		all = append(all, common{w.Name, mutatingConfiguration, w.ClientConfig, w.Rules, w.FailurePolicy, w.MatchPolicy, w.NamespaceSelector, w.ObjectSelector, w.SideEffects, w.TimeoutSeconds, w.AdmissionReviewVersions, w.MatchConditions})
		if w.ReinvocationPolicy == nil || *w.ReinvocationPolicy != admissionregistrationv1.NeverReinvocationPolicy {
			t.Errorf("%s: reinvocationPolicy must be explicitly Never", w.Name)
		}
	}
	for _, w := range append(vwc.Webhooks, sizes.Webhooks...) {
		all = append(all, common{w.Name, validatingConfiguration, w.ClientConfig, w.Rules, w.FailurePolicy, w.MatchPolicy, w.NamespaceSelector, w.ObjectSelector, w.SideEffects, w.TimeoutSeconds, w.AdmissionReviewVersions, w.MatchConditions})
	}

	seen := map[string]bool{}
	paths := map[string]bool{}
	for _, w := range all {
		want, ok := webhooks[w.name]
		if !ok {
			t.Errorf("unexpected webhook %s (add it to this test)", w.name)
			continue
		}
		if seen[w.name] {
			t.Errorf("duplicate webhook %s", w.name)
		}
		seen[w.name] = true
		if w.config != want.config {
			t.Errorf("%s is in the %s, want %s", w.name, w.config, want.config)
		}

		s := w.cc.Service
		if s == nil || w.cc.URL != nil {
			t.Errorf("%s: clientConfig must name the Service", w.name)
			continue
		}
		if s.Name != serviceName || s.Namespace != namespace || s.Port == nil || *s.Port != 443 {
			t.Errorf("%s: clientConfig.service = %s/%s:%v", w.name, s.Namespace, s.Name, s.Port)
		}
		if s.Path == nil || *s.Path != want.path {
			t.Errorf("%s: path = %v, want %s", w.name, s.Path, want.path)
		} else if paths[*s.Path] && *s.Path != pathResourceSize && *s.Path != pathMutateShoots {
			// The two size webhooks differ only in resources and failure
			// policy, the two mutating ones in operations (so that a
			// CREATE's call needs no condition); every other webhook has a
			// handler of its own.
			t.Errorf("%s: path %s used twice", w.name, *s.Path)
		} else {
			paths[*s.Path] = true
		}
		if len(w.cc.CABundle) != 0 {
			t.Errorf("%s: caBundle is injected by cert-manager, not committed", w.name)
		}

		// Explicit (the API server's defaults are not relied upon).
		if w.failure == nil || *w.failure != want.failure {
			t.Errorf("%s: failurePolicy = %v, want explicit %s", w.name, deref(w.failure), want.failure)
		}
		if w.sideEffects == nil || *w.sideEffects != want.sideEffects {
			t.Errorf("%s: sideEffects = %v, want explicit %s", w.name, deref(w.sideEffects), want.sideEffects)
		}
		if w.timeout == nil || *w.timeout < 1 || *w.timeout > want.maxTimeout {
			t.Errorf("%s: timeoutSeconds = %v, want explicit 1..%d", w.name, deref(w.timeout), want.maxTimeout)
		}
		if w.matchPolicy == nil || *w.matchPolicy != admissionregistrationv1.Equivalent {
			t.Errorf("%s: matchPolicy must be explicitly Equivalent", w.name)
		}
		if !reflect.DeepEqual(w.versions, []string{"v1"}) {
			t.Errorf("%s: admissionReviewVersions = %v, want [v1]", w.name, w.versions)
		}
		if w.objSel != nil {
			t.Errorf("%s: objectSelector: labels are user-controlled, a guard must not depend on them", w.name)
		}
		var conds []string
		for _, c := range w.conds {
			conds = append(conds, c.Name)
			if want, ok := conditionExpressions[c.Name]; ok && c.Expression != want {
				t.Errorf("%s: matchCondition %s is\n%s\nwant\n%s", w.name, c.Name, c.Expression, want)
			}
		}
		if !reflect.DeepEqual(conds, want.conditions) {
			t.Errorf("%s: matchConditions %v, want %v", w.name, conds, want.conditions)
		}

		// Never its own namespace; everything else that is not explicitly
		// excluded (projectsOnly: labelled project namespaces only).
		if want.projectsOnly {
			checkProjectsOnly(t, w.name, w.nsSel, namespace)
		} else if w.nsSel == nil {
			t.Errorf("%s: no namespaceSelector", w.name)
		} else {
			sel, err := metav1.LabelSelectorAsSelector(w.nsSel)
			if err != nil {
				t.Errorf("%s: namespaceSelector: %v", w.name, err)
			} else {
				for _, ns := range append([]string{namespace}, want.excludedAlso...) {
					if sel.Matches(labels.Set{metadataName: ns}) {
						t.Errorf("%s: namespaceSelector does not exclude %s", w.name, ns)
					}
				}
				for _, ns := range []string{"garden", "garden-dev", "default"} {
					if !sel.Matches(labels.Set{metadataName: ns}) {
						t.Errorf("%s: namespaceSelector excludes %s", w.name, ns)
					}
				}
				for _, req := range w.nsSel.MatchExpressions {
					if req.Key != metadataName {
						t.Errorf("%s: namespaceSelector uses label %s; only %s cannot be set by users", w.name, req.Key, metadataName)
					}
				}
				if len(w.nsSel.MatchLabels) > 0 {
					t.Errorf("%s: namespaceSelector.matchLabels: only %s NotIn is expected", w.name, metadataName)
				}
			}
		}

		var got []rule
		for _, r := range w.rules {
			ops := make([]string, 0, len(r.Operations))
			for _, op := range r.Operations {
				ops = append(ops, string(op))
			}
			sort.Strings(ops)
			if r.Scope == nil {
				t.Errorf("%s: rule %v has no explicit scope", w.name, r.Resources)
				continue
			}
			for _, g := range r.APIGroups {
				for _, v := range r.APIVersions {
					for _, res := range r.Resources {
						got = append(got, rule{g, v, res, strings.Join(ops, ","), *r.Scope})
					}
				}
			}
		}
		sortRules(got)
		sortRules(want.rules)
		if !reflect.DeepEqual(got, want.rules) {
			t.Errorf("%s: rules\n got %v\nwant %v", w.name, got, want.rules)
		}
	}
	for name := range webhooks {
		if !seen[name] {
			t.Errorf("webhook %s is missing", name)
		}
	}

	// The Service routes port 443 to the container's webhook port.
	var sp *corev1.ServicePort
	for i := range svc.Spec.Ports {
		if svc.Spec.Ports[i].Port == 443 {
			sp = &svc.Spec.Ports[i]
		}
	}
	if sp == nil {
		t.Fatal("the Service has no port 443")
	}
	dep := find[*appsv1.Deployment](t, docs, "Deployment", namespace, "seedwarden")
	if got := containerPort(t, dep, sp.TargetPort); got != int32(shippedConfig(t).Server.Port) {
		t.Errorf("Service 443 -> container port %d, but the server listens on %d", got, shippedConfig(t).Server.Port)
	}
	if !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(dep.Spec.Template.Labels)) {
		t.Error("the Service does not select the Deployment's pods")
	}
}

// Every failurePolicy and timeoutSeconds line has its reasoning in a comment
// right above it.
func TestWebhookDecisionsAreExplained(t *testing.T) {
	files := []string{
		filepath.Join(manifestsDir, "webhook-mutating.yaml"), filepath.Join(manifestsDir, "webhook-validating.yaml"),
		filepath.Join(resourceSizeDir, resourceSizeFile),
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(data), "\n")
		field := regexp.MustCompile(`^\s*(failurePolicy|timeoutSeconds|sideEffects):`)
		counts := map[string]int{}
		for i, l := range lines {
			m := field.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			counts[m[1]]++
			if strings.Contains(l, "#") {
				t.Errorf("%s:%d: keep the value free of trailing comments; explain it above", f, i+1)
			}
			if i == 0 || !strings.HasPrefix(strings.TrimSpace(lines[i-1]), "#") {
				t.Errorf("%s:%d: %s has no explanation in a comment above it", f, i+1, m[1])
			}
		}
		var cfg struct {
			Webhooks []struct{} `json:"webhooks"`
		}
		if err := yaml.Unmarshal(data, &cfg); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		n := len(cfg.Webhooks)
		for _, k := range []string{"failurePolicy", "timeoutSeconds", "sideEffects"} {
			if counts[k] != n {
				t.Errorf("%s: %d %s lines for %d webhooks", f, counts[k], k, n)
			}
		}
	}
}

func sortRules(r []rule) {
	sort.Slice(r, func(i, j int) bool {
		a, b := r[i], r[j]
		return strings.Join([]string{a.group, a.version, a.resource, a.ops, string(a.scope)}, "|") <
			strings.Join([]string{b.group, b.version, b.resource, b.ops, string(b.scope)}, "|")
	})
}

// checkProjectsOnly: the selector takes labelled project namespaces (not
// Gardener's own, labelled app=gardener) and nothing unlabelled: not
// seedwarden's namespace, garden, kube-system or cert-manager.
func checkProjectsOnly(t *testing.T, name string, nsSel *metav1.LabelSelector, namespace string) {
	t.Helper()
	if nsSel == nil {
		t.Errorf("%s: no namespaceSelector", name)
		return
	}
	sel, err := metav1.LabelSelectorAsSelector(nsSel)
	if err != nil {
		t.Errorf("%s: namespaceSelector: %v", name, err)
		return
	}
	project := labels.Set{metadataName: "garden-dev", "gardener.cloud/role": "project", "project.gardener.cloud/name": "dev"}
	if !sel.Matches(project) {
		t.Errorf("%s: namespaceSelector excludes the project namespace %v", name, project)
	}
	gardenerOwn := labels.Set{metadataName: "garden", "gardener.cloud/role": "project", "app": "gardener"}
	if sel.Matches(gardenerOwn) {
		t.Errorf("%s: namespaceSelector selects %v", name, gardenerOwn)
	}
	for _, ns := range []string{namespace, "garden", "kube-system", "cert-manager", "default"} {
		if sel.Matches(labels.Set{metadataName: ns}) {
			t.Errorf("%s: namespaceSelector selects the unlabelled namespace %s", name, ns)
		}
	}
}
