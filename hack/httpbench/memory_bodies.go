package main

// The maximum-size AdmissionReviews of the memory subcommand: what an
// attacker would send to make each request cost the server the most memory.

import (
	"encoding/json"
	"fmt"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
)

// memoryPaths are the webhook paths the workers take turns at: the placing
// webhook and the validating ones that decode the Shoot.
var memoryPaths = []string{mutateShootsPath, "/validate-shoot-binding", "/validate-shoot-capacity", validateResourceSizePath}

// bodyShape is how a review's bytes are spent.
type bodyShape struct {
	name, doc string
	// fill makes the review of the realistic Shoot n bytes long at most.
	fill func(shoot map[string]any, rv *admissionv1.AdmissionReview, n int) error
}

// bodyShapes: one long string (decoded into one allocation), many tiny
// annotations (the mutating webhook decodes metadata.annotations into a map,
// before the API server's 256 KiB limit on annotations applies), many empty
// worker pools (3 bytes each, decoded into a 48-byte api.Worker), and many
// tiny user groups (every path decodes userInfo).
var bodyShapes = []bodyShape{
	{"string", "one annotation whose value fills the review", func(shoot map[string]any, rv *admissionv1.AdmissionReview, n int) error {
		return padShoot(shoot, rv, n, func(room int) {
			annotations(shoot)["example.com/blob"] = strings.Repeat("x", room)
		})
	}},
	{"annotations", "metadata.annotations of 1-7 character keys and values `\"k1a2\":\"v\"`", func(shoot map[string]any, rv *admissionv1.AdmissionReview, n int) error {
		return padShoot(shoot, rv, n, func(room int) {
			a := annotations(shoot)
			for i := 0; room > 0; i++ {
				k := fmt.Sprintf("k%x", i)
				a[k] = "v"
				room -= len(k) + 7 // "k":"v",
			}
		})
	}},
	{"workers", "spec.provider.workers of empty objects `{}`", func(shoot map[string]any, rv *admissionv1.AdmissionReview, n int) error {
		return padShoot(shoot, rv, n, func(room int) {
			provider := shoot["spec"].(map[string]any)["provider"].(map[string]any)
			workers, _ := provider["workers"].([]any)
			for ; room > 0; room -= 3 { // {},
				workers = append(workers, map[string]any{})
			}
			provider["workers"] = workers
		})
	}},
	{"groups", "request.userInfo.groups of short names", func(shoot map[string]any, rv *admissionv1.AdmissionReview, n int) error {
		return padShoot(shoot, rv, n, func(room int) {
			for i := 0; room > 0; i++ {
				g := fmt.Sprintf("g%x", i)
				rv.Request.UserInfo.Groups = append(rv.Request.UserInfo.Groups, g)
				room -= len(g) + 3 // "g",
			}
		})
	}},
}

func annotations(shoot map[string]any) map[string]any {
	return shoot["metadata"].(map[string]any)["annotations"].(map[string]any)
}

// padShoot marshals the review of shoot, then lets pad spend the room left
// up to n bytes, and marshals again; it fails if the result is over n or
// under 95% of it.
func padShoot(shoot map[string]any, rv *admissionv1.AdmissionReview, n int, pad func(room int)) error {
	body, err := reviewBody(shoot, rv)
	if err != nil {
		return err
	}
	pad(n - len(body) - 64)
	if body, err = reviewBody(shoot, rv); err != nil {
		return err
	}
	if len(body) > n || len(body) < n*95/100 {
		return fmt.Errorf("padded review is %d bytes, want %d-%d", len(body), n*95/100, n)
	}
	return nil
}

func reviewBody(shoot map[string]any, rv *admissionv1.AdmissionReview) ([]byte, error) {
	obj, err := json.Marshal(shoot)
	if err != nil {
		return nil, err
	}
	rv.Request.Object.Raw = obj
	return json.Marshal(rv)
}

// maxSizeReview is a CREATE review of the realistic Shoot at most n bytes
// long, spent as shape says.
func maxSizeReview(shape bodyShape, n int) ([]byte, error) {
	shoot, err := realisticShoot("big-shoot")
	if err != nil {
		return nil, err
	}
	rv := review(shootGVK, shootsGVR, "garden-dev", nil)
	rv.Request.UID = "0b6b8f4e-3c1d-4e2a-9f5b-7a8c9d0e1f2a"
	rv.Request.Name = "big-shoot"
	if err := shape.fill(shoot, rv, n); err != nil {
		return nil, fmt.Errorf("%s: %w", shape.name, err)
	}
	return reviewBody(shoot, rv)
}
