package placement

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
)

func TestCheckStaying(t *testing.T) {
	zonal := func(zones ...string) func(*api.Shoot) {
		return func(sh *api.Shoot) {
			sh.Spec.ControlPlane = &api.ControlPlane{Zones: zones, HighAvailability: &api.HighAvailability{FailureTolerance: api.FailureTolerance{Type: "zone"}}}
		}
	}
	tests := []struct {
		name  string
		seed  *api.Seed // nil: the Shoot's seed "s" is gone
		usage int64
		shoot *api.Shoot
		snap  func(*Snapshot)
		want  []ReasonCode
	}{{
		name:  "fits",
		seed:  readySeed("s", withZones("", "a", "b", "c"), withAllocatable(3)),
		usage: 3,
		shoot: basicShoot(zonal("a")),
	}, {
		name: "a seed not ready, invisible or with overlapping networks is no violation for a Shoot on it",
		seed: readySeed("s", func(s *api.Seed) {
			s.Status.Conditions = nil
			s.Spec.Settings = &api.SeedSettings{Scheduling: &api.SeedSettingScheduling{Visible: false}}
		}),
		shoot: basicShoot(func(sh *api.Shoot) {
			sh.Spec.Networking = &api.Networking{Pods: ptr.To("10.200.0.0/16")}
		}),
	}, {
		name:  "gone",
		shoot: basicShoot(),
		want:  []ReasonCode{SeedNotFound},
	}, {
		name:  "deleting and tainted",
		seed:  readySeed("s", withTaints(api.SeedTaint{Key: "t"}), func(s *api.Seed) { s.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)} }),
		shoot: basicShoot(),
		want:  []ReasonCode{SeedDeleting, TaintNotTolerated},
	}, {
		name:  "a tolerated taint",
		seed:  readySeed("s", withTaints(api.SeedTaint{Key: "t"})),
		shoot: basicShoot(func(sh *api.Shoot) { sh.Spec.Tolerations = []api.Toleration{{Key: "t"}} }),
	}, {
		name: "the CloudProfile's selector and providerTypes",
		seed: readySeed("s", withLabels(map[string]string{"env": "dev"})),
		snap: func(s *Snapshot) {
			s.CloudProfiles["aws"] = NewCloudProfile("aws", &api.CloudProfileSpec{Type: "aws", SeedSelector: &api.SeedSelector{
				LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}, ProviderTypes: []string{"gcp"},
			}})
		},
		shoot: basicShoot(),
		want:  []ReasonCode{CloudProfileSelectorMismatch, ProviderNotEnabled},
	}, {
		name: "the Shoot's own selector, labels and provider",
		seed: readySeed("s", withLabels(map[string]string{"env": "dev"})),
		shoot: basicShoot(func(sh *api.Shoot) {
			sh.Spec.SeedSelector = &api.SeedSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}, ProviderTypes: []string{"gcp"}}
		}),
		want: []ReasonCode{ShootSelectorMismatch, ShootSelectorMismatch},
	}, {
		name:  "the CloudProfile gone",
		seed:  readySeed("s"),
		snap:  func(s *Snapshot) { delete(s.CloudProfiles, "aws") },
		shoot: basicShoot(),
		want:  []ReasonCode{CloudProfileNotFound},
	}, {
		name: "access restrictions",
		seed: readySeed("s"),
		shoot: basicShoot(func(sh *api.Shoot) {
			sh.Spec.AccessRestrictions = []api.AccessRestrictionWithOptions{{Name: "eu-access-only"}}
		}),
		want: []ReasonCode{AccessRestrictionUnsupported},
	}, {
		name:  "failure tolerance zone: too few zones and a pinned zone gone",
		seed:  readySeed("s", withZones("", "a", "b")),
		shoot: basicShoot(zonal("c")),
		want:  []ReasonCode{TooFewZones, ControlPlaneZoneMissing},
	}, {
		name:  "a pinned zone gone",
		seed:  readySeed("s", withZones("", "a")),
		shoot: basicShoot(func(sh *api.Shoot) { sh.Spec.ControlPlane = &api.ControlPlane{Zones: []string{"b"}} }),
		want:  []ReasonCode{ControlPlaneZoneMissing},
	}, {
		name:  "over allocatable",
		seed:  readySeed("s", withAllocatable(3)),
		usage: 4,
		shoot: basicShoot(),
		want:  []ReasonCode{SeedFull},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var snap *Snapshot
			if tt.seed != nil {
				snap = snapshotOf(map[string]int64{"s": tt.usage}, tt.seed)
			} else {
				snap = snapshotOf(nil, readySeed("other"))
			}
			if tt.snap != nil {
				tt.snap(snap)
			}
			got := CheckStaying(snap, "s", tt.shoot)
			var codes []ReasonCode
			for _, v := range got {
				codes = append(codes, v.Code)
				assert.NotEmpty(t, v.Message)
			}
			assert.Equal(t, tt.want, codes)
		})
	}
}

// A Shoot that stays breaks only rules the binding guard would refuse it
// for: each of CheckStaying's messages is one of CheckSeedChange's for a
// user binding the Shoot to its seed anew, but for the rules of a Shoot
// that stays (gone, pinned zones with failure tolerance zone, allocatable).
func TestCheckStayingAgreesWithTheBindingGuard(t *testing.T) {
	seed := readySeed("s", withTaints(api.SeedTaint{Key: "t"}), withLabels(map[string]string{"env": "dev"}), withZones("", "a"))
	shoot := basicShoot(func(sh *api.Shoot) {
		sh.Spec.SeedName = ptr.To("s")
		sh.Spec.AccessRestrictions = []api.AccessRestrictionWithOptions{{Name: "x"}}
		sh.Spec.SeedSelector = &api.SeedSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}
		sh.Spec.ControlPlane = &api.ControlPlane{Zones: []string{"b"}}
	})
	snap := snapshotOf(nil, seed)
	staying := Messages(CheckStaying(snap, "s", shoot))
	assert.Len(t, staying, 4)
	assert.ElementsMatch(t, CheckSeedChange(snap, nil, shoot, ChosenByUser, Disjoint), staying)
}
