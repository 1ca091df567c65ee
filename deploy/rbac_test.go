package manifests_test

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

// RBAC is exactly what the server uses: anything more must be added here on
// purpose, with the code that needs it.
func TestRBACIsLeastPrivilege(t *testing.T) {
	docs := manifests(t)
	type grant struct{ ns, group, resource, verb, name string }
	flatten := func(ns string, rules []rbacv1.PolicyRule) []grant {
		var out []grant
		for _, r := range rules {
			for _, v := range r.Verbs {
				for _, u := range r.NonResourceURLs {
					out = append(out, grant{ns, "", u, v, ""})
				}
				for _, g := range r.APIGroups {
					for _, res := range r.Resources {
						names := r.ResourceNames
						if len(names) == 0 {
							names = []string{""}
						}
						for _, n := range names {
							out = append(out, grant{ns, g, res, v, n})
						}
					}
				}
			}
		}
		return out
	}
	got := map[string][]grant{}
	for _, d := range docs {
		switch o := d.typed.(type) {
		case *rbacv1.ClusterRole:
			got["ClusterRole/"+o.Name] = flatten("", o.Rules)
		case *rbacv1.Role:
			got["Role/"+o.Namespace+"/"+o.Name] = flatten(o.Namespace, o.Rules)
		}
	}
	want := map[string][]grant{}
	add := func(role, ns, group string, resources []string, verbs []string, name string) {
		for _, r := range resources {
			for _, v := range verbs {
				want[role] = append(want[role], grant{ns, group, r, v, name})
			}
		}
	}
	read := []string{"get", "list", "watch"}
	add("ClusterRole/seedwarden", "", "core.gardener.cloud", []string{"seeds", "shoots", "cloudprofiles", "namespacedcloudprofiles", "projects"}, read, "")
	cfg := shippedConfig(t)
	// SubjectAccessReviews: the binding and SeedAutoscaler webhooks ask
	// about the requesting user (the latter always: it is served whenever a
	// cluster is), and the secure metrics endpoint about the scraper, whose
	// token it checks with a TokenReview first.
	add("ClusterRole/seedwarden", "", "authorization.k8s.io", []string{"subjectaccessreviews"}, []string{"create"}, "")
	if cfg.MetricsSecure() {
		add("ClusterRole/seedwarden", "", "authentication.k8s.io", []string{"tokenreviews"}, []string{"create"}, "")
	}
	add("ClusterRole/seedwarden", "", "", []string{"events"}, []string{"create", "patch"}, "")
	add("ClusterRole/seedwarden", "", "events.k8s.io", []string{"events"}, []string{"create", "patch"}, "")
	// The retry controller, as the shipped configuration runs it: binding
	// through shoots/binding, status.lastOperation through shoots/status.
	// Only bindMode update (Shoots from a CRD) would patch shoots itself.
	if !cfg.PendingShootsEnabled() {
		t.Fatal("the shipped configuration disables pendingShoots: drop the controller's permissions and this check")
	}
	add("ClusterRole/seedwarden", "", "core.gardener.cloud", []string{"shoots/status"}, []string{"patch"}, "")
	switch cfg.PendingShoots.BindMode {
	case "binding":
		add("ClusterRole/seedwarden", "", "core.gardener.cloud", []string{"shoots/binding"}, []string{"patch"}, "")
	case "update":
		add("ClusterRole/seedwarden", "", "core.gardener.cloud", []string{"shoots"}, []string{"patch"}, "")
	default:
		t.Fatalf("pendingShoots.bindMode %q", cfg.PendingShoots.BindMode)
	}
	want["ClusterRole/seedwarden-metrics-reader"] = []grant{{"", "", "/metrics", "get", ""}}
	// Leader election: the Lease the configuration names, in the pods' own
	// namespace; only create cannot be limited by name.
	if !cfg.LeaderElectionEnabled() {
		t.Fatal("the shipped configuration disables leader election, but runs two replicas")
	}
	if ns := cfg.LeaderElection.Namespace; ns != "" && ns != namespace {
		t.Fatalf("leaderElection.namespace %q: the Role grants Leases in %s only", ns, namespace)
	}
	add("Role/seedwarden/seedwarden", namespace, "coordination.k8s.io", []string{"leases"}, []string{"get", "update"}, cfg.LeaderElection.ID)
	add("Role/seedwarden/seedwarden", namespace, "coordination.k8s.io", []string{"leases"}, []string{"create"}, "")
	add("Role/seedwarden/seedwarden", namespace, "", []string{"secrets"}, read, placementKey)
	// The certificate watcher: only the Certificate the configuration names,
	// in the namespace it names.
	if !cfg.Certificate.Watched() {
		t.Fatal("the shipped configuration watches no Certificate: drop its permission and this check")
	}
	if cfg.Certificate.Namespace != namespace || cfg.Certificate.Name != certificate {
		t.Fatalf("certificate %s/%s: the Role grants %s/%s", cfg.Certificate.Namespace, cfg.Certificate.Name, namespace, certificate)
	}
	add("Role/seedwarden/seedwarden", namespace, "cert-manager.io", []string{"certificates"}, read, cfg.Certificate.Name)
	// Capacity reservations across replicas: get, create and update of
	// ConfigMaps in the reservation namespace (names follow the seeds).
	reservationNS := ""
	if cfg.CapacityEnabled() && cfg.Capacity.APIServer() {
		reservationNS = cfg.Capacity.ReservationNamespace
		if reservationNS != namespace {
			t.Fatalf("capacity.reservationNamespace %q: the Role grants ConfigMaps in %s only", reservationNS, namespace)
		}
		add("Role/seedwarden/seedwarden", namespace, "", []string{"configmaps"}, []string{"get", "create", "update"}, "")
	}
	add("Role/garden/seedwarden-region-config", gardenNS, "", []string{"configmaps"}, read, "")
	// The SeedAutoscaler controller, granted whether or not the shipped
	// configuration turns it on (it does not): SeedAutoscalers and their
	// status, the ManagedSeedSet and its replicas through the scale
	// subresource, the replicas' ManagedSeeds' metadata. Its events and
	// Shoot lists use the seedwarden ClusterRole's rules.
	// The SeedAutoscaler webhook lists a namespace's SeedAutoscalers
	// through the same rule (list), on every replica.
	const autoscalerRole = "ClusterRole/seedwarden-autoscaler"
	add(autoscalerRole, "", "autoscaling.seedwarden.io", []string{"seedautoscalers"}, read, "")
	add(autoscalerRole, "", "autoscaling.seedwarden.io", []string{"seedautoscalers/status"}, []string{"update", "patch"}, "")
	add(autoscalerRole, "", "seedmanagement.gardener.cloud", []string{"managedseedsets"}, read, "")
	add(autoscalerRole, "", "seedmanagement.gardener.cloud", []string{"managedseedsets/scale"}, []string{"get", "update", "patch"}, "")
	add(autoscalerRole, "", "seedmanagement.gardener.cloud", []string{"managedseeds"}, []string{"list"}, "")
	// Scale-in by drain: the SeedDrains it creates, finds by label and deletes.
	add(autoscalerRole, "", "operations.seedwarden.io", []string{"seeddrains"}, []string{"get", "list", "create", "delete"}, "")
	// SeedDrains: every replica watches them (the cordon), the leader
	// reports in their status.
	const seedDrainRole = "ClusterRole/seedwarden-seeddrain"
	add(seedDrainRole, "", "operations.seedwarden.io", []string{"seeddrains"}, read, "")
	add(seedDrainRole, "", "operations.seedwarden.io", []string{"seeddrains/status"}, []string{"update", "patch"}, "")
	// The audit's reports: listed once a term, written on change, deleted
	// when their violations clear.
	add("ClusterRole/seedwarden-audit", "", "openreports.io", []string{"reports"}, []string{"get", "list", "create", "update", "delete"}, "")

	sortGrants := func(g []grant) {
		sort.Slice(g, func(i, j int) bool {
			return strings.Join([]string{g[i].ns, g[i].group, g[i].resource, g[i].verb, g[i].name}, "|") < strings.Join([]string{g[j].ns, g[j].group, g[j].resource, g[j].verb, g[j].name}, "|")
		})
	}
	for role := range want {
		sortGrants(want[role])
		sortGrants(got[role])
		if !reflect.DeepEqual(got[role], want[role]) {
			t.Errorf("%s:\n got %v\nwant %v", role, got[role], want[role])
		}
	}
	for role := range got {
		if _, ok := want[role]; !ok {
			t.Errorf("unexpected %s", role)
		}
	}
	for role, gs := range got {
		for _, g := range gs {
			if g.group == "*" || g.resource == "*" || g.verb == "*" {
				t.Errorf("%s: wildcard %+v", role, g)
			}
			if g.resource == "secrets" && g.name == "" {
				t.Errorf("%s: Secrets without resourceNames", role)
			}
			switch {
			case g.resource != "configmaps":
			case g.ns == gardenNS:
			case g.ns == reservationNS && reservationNS != "" && g.verb != "list" && g.verb != "watch" && g.verb != "delete":
			default:
				t.Errorf("%s: %s on ConfigMaps outside the garden namespace (and the reservation namespace)", role, g.verb)
			}
			if g.resource == "leases" && g.verb != "create" && g.name == "" {
				t.Errorf("%s: Leases without resourceNames (%s)", role, g.verb)
			}
			if g.group == "core.gardener.cloud" && g.resource == "shoots" && g.verb != "get" && g.verb != "list" && g.verb != "watch" &&
				cfg.PendingShoots.BindMode != "update" {
				t.Errorf("%s: %s on shoots, which only bindMode update needs", role, g.verb)
			}
		}
	}

	// Bindings: each role to the seedwarden ServiceAccount, in the role's namespace.
	sa := rbacv1.Subject{Kind: "ServiceAccount", Name: "seedwarden", Namespace: namespace}
	bound := map[string]bool{}
	for _, d := range docs {
		switch o := d.typed.(type) {
		case *rbacv1.ClusterRoleBinding:
			if o.RoleRef.Name == "seedwarden-metrics-reader" {
				// Only the scraper's ServiceAccount (servicemonitor.yaml) reads the metrics.
				scraper := rbacv1.Subject{Kind: "ServiceAccount", Name: metricsScraper, Namespace: namespace}
				if !reflect.DeepEqual(o.Subjects, []rbacv1.Subject{scraper}) {
					t.Errorf("ClusterRoleBinding %s: %+v, want only %s", o.Name, o.Subjects, metricsScraper)
				}
				continue
			}
			if !reflect.DeepEqual(o.Subjects, []rbacv1.Subject{sa}) || o.RoleRef.Kind != "ClusterRole" {
				t.Errorf("ClusterRoleBinding %s: %+v -> %+v", o.Name, o.Subjects, o.RoleRef)
			}
			bound["ClusterRole/"+o.RoleRef.Name] = true
		case *rbacv1.RoleBinding:
			if !reflect.DeepEqual(o.Subjects, []rbacv1.Subject{sa}) || o.RoleRef.Kind != "Role" {
				t.Errorf("RoleBinding %s/%s: %+v -> %+v", o.Namespace, o.Name, o.Subjects, o.RoleRef)
			}
			bound["Role/"+o.Namespace+"/"+o.RoleRef.Name] = true
		}
	}
	for role := range want {
		// The metrics reader is for the scraper, bound above.
		if role != "ClusterRole/seedwarden-metrics-reader" && !bound[role] {
			t.Errorf("%s is not bound to the seedwarden ServiceAccount", role)
		}
	}
	if bound["ClusterRole/seedwarden-metrics-reader"] {
		t.Error("the metrics reader is bound to seedwarden itself")
	}
}
