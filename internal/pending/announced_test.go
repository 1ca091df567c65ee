package pending

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/placementtoken"
)

// announcedShoot is a pending Shoot as the mutating webhook leaves it in
// placement mode binding: the seed, its token and the admission's
// reservation in annotations.
func announcedShoot(t *testing.T, signer *placementtoken.Signer, name, seed, tokenSeed string) *unstructured.Unstructured {
	u := fullShoot(name, nil)
	token := signer.Sign(placementtoken.Subject{Namespace: "garden-dev", Name: name, Seed: tokenSeed})
	require.NoError(t, unstructured.SetNestedStringMap(u.Object, map[string]string{
		placementtoken.SeedAnnotation: seed,
		placementtoken.Annotation:     token,
		cache.AnnotationReservation:   "admission-uid",
	}, "metadata", "annotations"))
	return u
}

func testSigner(t *testing.T) *placementtoken.Signer {
	s, err := placementtoken.NewSigner([][]byte{[]byte("0123456789abcdef0123456789abcdef")}, time.Minute, nil)
	require.NoError(t, err)
	return s
}

func TestReconcileAnnouncedSeed(t *testing.T) {
	signer := testSigner(t)
	otherSigner, err := placementtoken.NewSigner([][]byte{[]byte("fedcba9876543210fedcba9876543210")}, time.Minute, nil)
	require.NoError(t, err)
	// The fresh decision would pick aws-eu1; the announced seed is aws-eu2.
	fresh := scheduled
	tests := []struct {
		name     string
		shoot    *unstructured.Unstructured
		verifier TokenVerifier
		fits     bool
		wantSeed string
		// wantPlaceOn: PlaceOn was asked (the token verified).
		wantPlaceOn bool
		// wantReleased: the admission's reservation was given back here
		// (PlaceOn gives it back itself).
		wantReleased bool
		// wantRetries: quick retries of the announced seed first.
		wantRetries int
	}{
		{name: "kept while it fits", shoot: announcedShoot(t, signer, "s1", "aws-eu2", "aws-eu2"), verifier: signer, fits: true,
			wantSeed: "aws-eu2", wantPlaceOn: true},
		{name: "decided again when it no longer fits, after quick retries", shoot: announcedShoot(t, signer, "s1", "aws-eu2", "aws-eu2"), verifier: signer,
			wantSeed: fresh.Seed, wantPlaceOn: true, wantRetries: announcedRetries},
		{name: "token for another seed: not trusted", shoot: announcedShoot(t, signer, "s1", "aws-eu2", "aws-eu1"), verifier: signer, fits: true,
			wantSeed: fresh.Seed, wantReleased: true},
		{name: "token under another key: not trusted", shoot: announcedShoot(t, otherSigner, "s1", "aws-eu2", "aws-eu2"), verifier: signer, fits: true,
			wantSeed: fresh.Seed, wantReleased: true},
		{name: "no verifier: not trusted", shoot: announcedShoot(t, signer, "s1", "aws-eu2", "aws-eu2"), fits: true,
			wantSeed: fresh.Seed, wantReleased: true},
		{name: "nothing announced", shoot: fullShoot("s1", nil), verifier: signer, fits: true, wantSeed: fresh.Seed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, BindThroughSubresource, tt.shoot)
			f.r.Verifier = tt.verifier
			f.store.decide = func(*api.Shoot) placement.Decision { return fresh }
			f.store.placeOn = func(string) bool { return tt.fits }

			for i := range tt.wantRetries {
				assert.Equal(t, reconcile.Result{RequeueAfter: conflictBackoffBase << i}, f.reconcile(t, "s1"), "retry %d", i)
				assert.Empty(t, f.writes.Writes(), "nothing bound while the announced seed is retried")
			}
			assert.Zero(t, f.reconcile(t, "s1"))

			writes := f.writes.Writes()
			require.Len(t, writes, 1)
			spec := writes[0].body["spec"].(map[string]any)
			assert.Equal(t, tt.wantSeed, spec["seedName"])
			if tt.wantPlaceOn {
				call := placeOnCall{seed: "aws-eu2", from: "admission-uid", to: ReservationKey("garden-dev", "s1")}
				assert.Equal(t, slices.Repeat([]placeOnCall{call}, tt.wantRetries+1), f.store.placedOn)
			} else {
				assert.Empty(t, f.store.placedOn)
			}
			assert.Equal(t, tt.wantReleased, slices.Contains(f.store.releases, "admission-uid"), "releases: %v", f.store.releases)
			decided := len(f.store.places) == 1
			assert.Equal(t, tt.wantSeed == fresh.Seed, decided, "decided again")
			assert.Equal(t, `Scheduled to seed "`+tt.wantSeed+`"`, f.recorder.Events()[0].note)
			assert.Equal(t, ReasonSchedulingSuccessful, f.recorder.Events()[0].reason)
		})
	}
}

// A binding to the announced seed that is refused (here: full cluster-wide)
// must not be retried on that seed for ever: the next attempt decides afresh.
func TestReconcileAnnouncedSeedRefused(t *testing.T) {
	signer := testSigner(t)
	f := newFixture(t, BindThroughSubresource, announcedShoot(t, signer, "s1", "aws-eu2", "aws-eu2"))
	f.r.Verifier = signer
	f.store.decide = func(*api.Shoot) placement.Decision { return scheduled }
	f.store.placeOn = func(string) bool { return true }
	refused := true
	f.writes.fail = func(write) error {
		if refused {
			return apierrors.NewForbidden(schema.GroupResource{Group: api.GroupName, Resource: "shoots/binding"}, "s1", errors.New(`seed "aws-eu2" is full`))
		}
		return nil
	}

	assert.NotZero(t, f.reconcile(t, "s1"))
	assert.Len(t, f.store.placedOn, 1)
	assert.Empty(t, f.store.places, "the announced seed was tried first")

	refused = false
	assert.Zero(t, f.reconcile(t, "s1"))
	assert.Len(t, f.store.placedOn, 1, "the announced seed is not tried again")
	require.Len(t, f.store.places, 1)
	writes := f.writes.Writes()
	require.Len(t, writes, 2)
	assert.Equal(t, scheduled.Seed, writes[1].body["spec"].(map[string]any)["seedName"])
}

// generatedAnnouncedShoot is a pending generateName Shoot carrying token (the
// mutating webhook's, signed with the prefix and no name).
func generatedAnnouncedShoot(t *testing.T, name, token string) *unstructured.Unstructured {
	u := fullShoot(name, nil)
	require.NoError(t, unstructured.SetNestedField(u.Object, "web-", "metadata", "generateName"))
	require.NoError(t, unstructured.SetNestedStringMap(u.Object, map[string]string{
		placementtoken.SeedAnnotation: "aws-eu2",
		placementtoken.Annotation:     token,
		cache.AnnotationReservation:   "admission-uid",
	}, "metadata", "annotations"))
	return u
}

// A generateName Shoot's token copied (an UPDATE of the
// annotations) onto another Shoot with the same prefix verifies for it too;
// the controller honours it for the first Shoot only and decides the copy
// afresh. The first Shoot's repeated attempts keep its announced seed.
func TestReconcileAnnouncedTokenCopiedToGeneratedName(t *testing.T) {
	signer := testSigner(t)
	token := signer.SignRequest(placementtoken.Subject{Namespace: "garden-dev", GenerateName: "web-", Seed: "aws-eu2"}, "admission-uid")
	f := newFixture(t, BindThroughSubresource, generatedAnnouncedShoot(t, "web-x7k2p", token), generatedAnnouncedShoot(t, "web-q9z4m", token))
	f.r.Verifier = signer
	f.store.decide = func(*api.Shoot) placement.Decision { return scheduled }
	f.store.placeOn = func(string) bool { return true }

	seedOf := func(i int) any {
		writes := f.writes.Writes()
		require.Len(t, writes, i+1)
		return writes[i].body["spec"].(map[string]any)["seedName"]
	}
	assert.Zero(t, f.reconcile(t, "web-x7k2p"))
	assert.Equal(t, "aws-eu2", seedOf(0), "the token's own Shoot")
	assert.Zero(t, f.reconcile(t, "web-q9z4m"))
	assert.Equal(t, scheduled.Seed, seedOf(1), "the copy is decided afresh")
	assert.Len(t, f.store.placedOn, 1, "the announced seed was not tried for the copy")
	assert.NotContains(t, f.store.releases, "admission-uid", "the reservation the copy names is the first Shoot's")
	assert.Zero(t, f.reconcile(t, "web-x7k2p"))
	assert.Equal(t, "aws-eu2", seedOf(2), "the token's own Shoot, again")
}
