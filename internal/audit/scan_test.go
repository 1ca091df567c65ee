package audit

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/placement"
)

func TestScan(t *testing.T) {
	zones := func(s *api.Shoot) *api.Shoot {
		s.Spec.ControlPlane = &api.ControlPlane{Zones: []string{"x", "y"}}
		return s
	}
	deleting := func(s *api.Shoot) *api.Shoot {
		s.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
		return s
	}
	snap := snapshot(seed("tainted", "t"), seed("plain"))
	f := Scan(snap, reduced(t,
		shoot("garden-b", "untolerating", "tainted"),
		shoot("garden-a", "untolerating", "tainted"),
		shoot("garden-a", "tolerating", "tainted", "t"),
		shoot("garden-a", "fine", "plain"),
		shoot("garden-a", "pending", ""),
		deleting(shoot("garden-a", "leaving", "tainted")),
		shoot("garden-a", "orphan", "gone"),
		zones(shoot("garden-a", "zoned", "plain")),
	))
	assert.Equal(t, 6, f.Checked, "bound Shoots not being deleted")
	assert.Equal(t, []Result{
		{Namespace: "garden-a", Shoot: "orphan", Seed: "gone", Rule: placement.SeedNotFound, Message: `seed "gone" not found`},
		{Namespace: "garden-a", Shoot: "untolerating", Seed: "tainted", Rule: placement.TaintNotTolerated, Message: `spec.tolerations [] do not tolerate the taints ["t"] of seed "tainted"`},
		{Namespace: "garden-a", Shoot: "zoned", Seed: "plain", Rule: placement.ControlPlaneZoneMissing,
			Message: `spec.controlPlane.zones[0]: zone "x" is not available in seed "plain" (it has []); spec.controlPlane.zones[1]: zone "y" is not available in seed "plain" (it has [])`},
		{Namespace: "garden-b", Shoot: "untolerating", Seed: "tainted", Rule: placement.TaintNotTolerated, Message: `spec.tolerations [] do not tolerate the taints ["t"] of seed "tainted"`},
	}, f.Results)
	assert.Equal(t, map[metrics.AuditKey]int{
		{Seed: "gone", Rule: "SeedNotFound"}:             1,
		{Seed: "tainted", Rule: "TaintNotTolerated"}:     2,
		{Seed: "plain", Rule: "ControlPlaneZoneMissing"}: 1,
	}, f.Violating())
}

// A NamespacedCloudProfile resolves in each Shoot's namespace, so Shoots
// that share a key are checked per namespace there.
func TestScanNamespacedCloudProfile(t *testing.T) {
	snap := snapshot(seed("s"))
	snap.NamespacedCloudProfiles = map[string]*placement.CloudProfile{"garden-a/p": placement.NewCloudProfile("p", &api.CloudProfileSpec{Type: "aws"})}
	ncp := func(s *api.Shoot) *api.Shoot {
		s.Spec.CloudProfileName = nil
		s.Spec.CloudProfile = &api.CloudProfileReference{Kind: api.KindNamespacedCloudProfile, Name: "p"}
		return s
	}
	f := Scan(snap, reduced(t, ncp(shoot("garden-a", "x", "s")), ncp(shoot("garden-b", "x", "s"))))
	assert.Equal(t, []Result{{Namespace: "garden-b", Shoot: "x", Seed: "s", Rule: placement.CloudProfileNotFound,
		Message: `spec.cloudProfile: NamespacedCloudProfile "p" not found in namespace "garden-b"`}}, f.Results)
}

// The memo changes nothing: every Shoot gets what CheckStaying says of it.
func TestScanAgreesWithCheckStaying(t *testing.T) {
	snap := snapshot(seed("a", "t"), seed("b"), seed("c", "t", "u"))
	var shoots []*api.Shoot
	for i, seedName := range []string{"a", "b", "c", "a", "c", "b", "gone"} {
		for j, tols := range [][]string{nil, {"t"}, {"t", "u"}} {
			shoots = append(shoots, shoot("garden-p", string(rune('a'+i))+string(rune('a'+j)), seedName, tols...))
		}
	}
	f := Scan(snap, reduced(t, shoots...))
	var want []Result
	for _, s := range shoots {
		for _, v := range placement.CheckStaying(snap, *s.Spec.SeedName, s) {
			want = append(want, Result{Namespace: s.Namespace, Shoot: s.Name, Seed: *s.Spec.SeedName, Rule: v.Code, Message: v.Message})
		}
	}
	assert.ElementsMatch(t, want, f.Results)
	assert.NotEmpty(t, want)
}

// A Scanner that kept the keys of an earlier scan finds what a fresh scan
// finds, also after the landscape and the Shoots changed.
func TestScannerReusesKeys(t *testing.T) {
	var sc Scanner
	shoots := []*api.Shoot{shoot("garden-a", "x", "s"), shoot("garden-a", "y", "s", "t")}
	snap := snapshot(seed("s"))
	assert.Empty(t, sc.Scan(snap, reduced(t, shoots...)).Results)
	assert.Len(t, sc.specs, 2)
	snap = snapshot(seed("s", "t"))
	shoots = append(shoots, shoot("garden-a", "z", "s", "u"))
	assert.Equal(t, Scan(snap, reduced(t, shoots...)), sc.Scan(snap, reduced(t, shoots...)))
	assert.Len(t, sc.Scan(snap, reduced(t, shoots[0])).Results, 1)
	assert.Len(t, sc.specs, 1, "keys no Shoot has are dropped")
}

func TestNextWait(t *testing.T) {
	assert.Equal(t, 5*time.Minute, nextWait(5*time.Minute, time.Second))
	assert.Equal(t, 20*time.Second, nextWait(10*time.Second, time.Second), "an audit of 1s waits 20s at least")
}
