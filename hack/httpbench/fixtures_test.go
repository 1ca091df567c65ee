package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/config"
	"github.com/seedwarden/seedwarden/internal/landscapegen"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// The bodies a worker sends are valid AdmissionReviews whose Shoot is the
// realistic one with the request's UID and name, one per region, and the
// landscape places each on a seed of its region.
func TestShootRequestBodies(t *testing.T) {
	tmpls, err := shootTemplates()
	if err != nil {
		t.Fatal(err)
	}
	if len(tmpls) != len(landscapegen.Regions) {
		t.Fatalf("%d templates", len(tmpls))
	}
	uid, name := make([]byte, len(uidMarker)), make([]byte, len(nameMarker))
	putUID(uid, rand.New(rand.NewPCG(1, 2)))
	putName(name, 63, 1234567)
	if string(name) != "h03f012d687" {
		t.Fatalf("name %q", name)
	}
	// 40 seeds: one of each provider in each region.
	store := cache.NewStore(cache.Options{})
	store.Load(landscapegen.Landscape(40, 100))
	opts := placement.Options{Strategy: placement.MinimalDistance, NetworkMode: placement.Disjoint}

	for i, tmpl := range tmpls {
		region := landscapegen.Regions[i]
		if tmpl.objectBytes < minShootBytes || tmpl.objectBytes > maxShootBytes {
			t.Errorf("%s: Shoot of %d bytes", region, tmpl.objectBytes)
		}
		buf := make([]byte, len(tmpl.body))
		tmpl.fill(buf, uid, name)
		var rv admissionv1.AdmissionReview
		if err := json.Unmarshal(buf, &rv); err != nil {
			t.Fatal(err)
		}
		req := rv.Request
		if string(req.UID) != string(uid) || req.Name != string(name) || req.Operation != admissionv1.Create || *req.DryRun {
			t.Fatalf("request %+v", req)
		}
		var shoot api.Shoot
		if err := json.Unmarshal(req.Object.Raw, &shoot); err != nil {
			t.Fatal(err)
		}
		if shoot.Name != string(name) || len(shoot.Spec.Provider.Workers) != 4 || shoot.Spec.Region != region ||
			shoot.Spec.Provider.Workers[0].Zones[0] != region+"-a" {
			t.Fatalf("shoot %+v", shoot)
		}
		var generic map[string]any
		if err := json.Unmarshal(req.Object.Raw, &generic); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"addons", "kubernetes", "maintenance", "extensions", "resources", "hibernation"} {
			if generic["spec"].(map[string]any)[k] == nil {
				t.Errorf("spec.%s missing", k)
			}
		}
		d := store.Place(&shoot, opts, "")
		if !d.Schedulable() {
			t.Fatalf("%s: not placed: %s", region, d.Summary())
		}
		var n int
		if _, err := fmt.Sscanf(d.Seed, "seed-%d", &n); err != nil || landscapegen.Regions[(n/4)%len(landscapegen.Regions)] != region {
			t.Errorf("%s: placed on %s", region, d.Seed)
		}
	}
}

func TestConfigMapRequestBody(t *testing.T) {
	tmpl, err := configMapTemplate(100 << 10)
	if err != nil {
		t.Fatal(err)
	}
	if tmpl.objectBytes != 100<<10 {
		t.Fatalf("ConfigMap of %d bytes", tmpl.objectBytes)
	}
	var rv admissionv1.AdmissionReview
	if err := json.Unmarshal(tmpl.body, &rv); err != nil {
		t.Fatal(err)
	}
}

func TestConfigIsValid(t *testing.T) {
	for _, limit := range []string{"", "1Mi"} {
		for _, mode := range []string{"binding", "patch"} {
			if _, err := config.Parse([]byte(configYAML(ports{9443, 8080, 8081}, "/tmp/certs", 5*time.Second, limit, mode))); err != nil {
				t.Errorf("size limit %q, placement mode %s: %v", limit, mode, err)
			}
		}
	}
}

func TestCheck(t *testing.T) {
	uid := []byte("00000000-0000-4000-8000-000000000001")
	ok := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"00000000-0000-4000-8000-000000000001","allowed":true,` +
		`"patch":"W3sib3AiOiJhZGQiLCJwYXRoIjoiL3NwZWMvc2VlZE5hbWUiLCJ2YWx1ZSI6InNlZWQtMDAwNDAifV0=","patchType":"JSONPatch"}}`
	seed, _, err := check(200, []byte(ok), uid, true)
	if err != nil || seed != "seed-00040" {
		t.Fatalf("seed %q, err %v", seed, err)
	}
	// Placement mode binding: the seed is announced in an annotation.
	announced := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"00000000-0000-4000-8000-000000000001","allowed":true,` +
		`"patch":"W3sib3AiOiJhZGQiLCJwYXRoIjoiL3NwZWMvc2NoZWR1bGVyTmFtZSIsInZhbHVlIjoic2VlZHdhcmRlbiJ9LHsib3AiOiJhZGQiLCJwYXRoIjoiL21ldGFkYXRhL2Fubm90YXRpb25zL3NlZWR3YXJkZW4uaW9+MXNlZWQiLCJ2YWx1ZSI6InNlZWQtMDAwNDEifV0=","patchType":"JSONPatch"}}`
	if seed, _, err := check(200, []byte(announced), uid, true); err != nil || seed != "seed-00041" {
		t.Fatalf("binding mode: seed %q, err %v", seed, err)
	}
	unsched := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"00000000-0000-4000-8000-000000000001","allowed":true,"warnings":["seedwarden: no seed fits this Shoot; it stays pending: x"]}}`
	if _, u, err := check(200, []byte(unsched), uid, true); err == nil || !u {
		t.Fatalf("unschedulable: %v %v", u, err)
	}
	if _, _, err := check(200, []byte(ok), []byte("00000000-0000-4000-8000-000000000002"), true); err == nil {
		t.Fatal("wrong UID accepted")
	}
	if _, _, err := check(500, []byte("boom"), uid, false); err == nil {
		t.Fatal("500 accepted")
	}
}
