package handlers

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"

	"github.com/seedwarden/seedwarden/internal/authz"
)

// Forged binding reviews (client authentication off) used to cost a
// SubjectAccessReview each, 1,005 for 1,000, also for namespaces of no
// Project. Those are now denied before any is asked; in a Project's
// namespace one question is asked once while its answer is cached, however
// many reviews ask it at once.

// forgedBindingReviews are n CREATEs choosing seed aws-eu1 without a
// placement token, in the namespace namespace(i), by user(i).
func forgedBindingReviews(t *testing.T, n int, namespace func(int) string, user func(int) string) []string {
	t.Helper()
	bodies := make([]string, n)
	for i := range bodies {
		ns := namespace(i)
		r := vReview{uid: fmt.Sprintf("00000000-0000-4000-8000-%012d", i), namespace: ns,
			object: strings.Replace(vShoot("aws-eu1", nil), `"namespace": "garden-dev"`, fmt.Sprintf(`"namespace": %q`, ns), 1),
			user:   &authenticationv1.UserInfo{Username: user(i)}}
		bodies[i] = r.body(t)
	}
	return bodies
}

// serveAll sends the bodies to v from 16 goroutines and returns how many were
// allowed and the denials' messages.
func serveAll(t *testing.T, v *ShootBindingValidator, bodies []string) (allowed int, messages map[string]int) {
	t.Helper()
	var mu sync.Mutex
	messages = map[string]int{}
	next := make(chan string)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for body := range next {
				resp := vServe(t, v, body)
				mu.Lock()
				if resp.Allowed {
					allowed++
				} else {
					messages[vMessage(resp)]++
				}
				mu.Unlock()
			}
		})
	}
	for _, b := range bodies {
		next <- b
	}
	close(next)
	wg.Wait()
	return allowed, messages
}

func TestForgedBindingReviewsOutsideProjectsAskNoSubjectAccessReview(t *testing.T) {
	sars := &reviewCounter{}
	f := newBindingFixture(t)
	f.v.Authorizer = authz.NewSARAuthorizer(sars, BindingPermission, time.Minute, time.Second, nil)
	f.v.Projects = f.v.Landscape.(ProjectLookup)

	bodies := forgedBindingReviews(t, 1000,
		func(i int) string { return fmt.Sprintf("forged-%d", i%10) },
		func(i int) string { return fmt.Sprintf("forger-%d", i) })
	allowed, messages := serveAll(t, f.v, bodies)
	assert.Zero(t, allowed)
	assert.Zero(t, sars.calls.Load(), "no SubjectAccessReview for a namespace of no Project")
	require.Len(t, messages, 1000, "each denial names its user")
	for m := range messages {
		require.Regexp(t, `^seedwarden: user "forger-\d+" may not set spec.seedName to "aws-eu1": namespace "forged-\d" belongs to no Project; Shoots are placed in Project namespaces only$`, m)
	}

	// A binder in the Project's namespace is asked about, and allowed.
	resp := vServe(t, f.v, vReview{object: vShoot("aws-eu1", nil), user: binderUser}.body(t))
	assert.True(t, resp.Allowed, vMessage(resp))
	assert.Equal(t, int32(1), sars.calls.Load())
}

// In a Project's namespace: 1,000 copies of one forged review cost one
// SubjectAccessReview; 1,000 naming 1,000 users cost one each (the cache
// keeps every definite answer), never more.
func TestForgedBindingReviewsInAProjectAreAskedOncePerQuestion(t *testing.T) {
	for _, tc := range []struct {
		name     string
		user     func(int) string
		wantSARs int32
	}{
		{"one question", func(int) string { return "forger" }, 1},
		{"1,000 users", func(i int) string { return fmt.Sprintf("forger-%d", i) }, 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sars := &reviewCounter{}
			f := newBindingFixture(t)
			f.v.Authorizer = authz.NewSARAuthorizer(sars, BindingPermission, time.Minute, time.Second, nil)
			f.v.Projects = f.v.Landscape.(ProjectLookup)
			bodies := forgedBindingReviews(t, 1000, func(int) string { return vNamespace }, tc.user)
			for range 2 { // the second round from the cache
				allowed, _ := serveAll(t, f.v, bodies)
				assert.Zero(t, allowed)
			}
			assert.Equal(t, tc.wantSARs, sars.calls.Load())
		})
	}
}
