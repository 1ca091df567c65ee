package manifests_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
)

// seedwardenUser is the shipped ServiceAccount as the API server names it
// in a request's userInfo.
var seedwardenUser = "system:serviceaccount:" + namespace + ":seedwarden"

// TestOwnBindsSkipTheGuards: the retry controller's binds (shoots/binding,
// and an UPDATE of spec.seedName where Shoots come from a CRD) reach neither
// the binding nor the capacity webhook, since the controller checks both
// itself before it binds, nor the Shoot size webhook, since a bind adds a
// seed's name and nothing else; the same requests of anyone else are sent
// as before.
func TestOwnBindsSkipTheGuards(t *testing.T) {
	m := conditionMatchers(t)
	find[*corev1.ServiceAccount](t, manifests(t), "ServiceAccount", namespace, "seedwarden")
	pending := shootVariant{region: "eu-central-1"}.json()
	bound := strings.Replace(pending, `"region"`, `"seedName":"aws-eu1","region"`, 1)
	requests := map[string]shootRequest{
		"binding":        {op: admissionv1.Update, subResource: "binding", old: pending, obj: bound},
		"update of seed": {op: admissionv1.Update, old: pending, obj: bound},
	}
	for name, r := range requests {
		for _, w := range []string{seedWebhook, "size.shoots.seedwarden.io"} {
			own := r
			own.user = seedwardenUser
			assert.False(t, sent(t, m[w], own), "seedwarden's own %s is sent to %s", name, w)
			for _, other := range []string{"alice", "system:serviceaccount:garden:gardener-scheduler", "system:serviceaccount:other:seedwarden"} {
				r.user = other
				assert.True(t, sent(t, m[w], r), "%s of %s is not sent to %s", name, other, w)
			}
		}
	}
}
