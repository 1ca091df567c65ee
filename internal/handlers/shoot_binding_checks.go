package handlers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/seedwarden/seedwarden/internal/admissionjson"
)

// This file holds the binding webhook's checks of the request's shape, which
// placement's seed rules (CheckSeedChange, CheckSeedKept) do not see: which
// way the seed may change through which resource, and what a binding may
// change besides the seed, compared in the objects as sent.

// classifySeedChange applies the rules that depend only on the old and new
// seed. needsCheck means a seed is being set or changed and the user's
// permission and the seed must be checked; a non-empty denial refuses the
// request outright.
func classifySeedChange(c *shootChange) (needsCheck bool, denial string) {
	switch {
	case c.binding && c.newSeed == c.oldSeed:
		if c.newSeed == "" {
			return false, "the binding sets no seed (spec.seedName is empty)"
		}
		return false, fmt.Sprintf("the binding does not change the seed (spec.seedName is %q already)", c.newSeed)
	case c.oldSeed != "" && c.newSeed == "":
		return false, fmt.Sprintf("spec.seedName: unsetting the seed (%q) is not allowed", c.oldSeed)
	case c.newSeed == c.oldSeed:
		return false, ""
	case !c.binding && c.op == admissionv1.Update && c.oldSeed != "":
		return false, fmt.Sprintf("spec.seedName: changing the seed from %q to %q through the shoots resource is not allowed; use the shoots/binding subresource", c.oldSeed, c.newSeed)
	case !c.binding && c.op == admissionv1.Update:
		return false, fmt.Sprintf("spec.seedName: setting the seed to %q through the shoots resource is not allowed; use the shoots/binding subresource", c.newSeed)
	default:
		return true, ""
	}
}

// bindingSpecChange: a binding that moves the Shoot to another seed may
// change spec.seedName only (the control plane is restored from backup on
// the new seed; other changes would ride along unreviewed). Setting the
// first seed through a binding may change more, as in Gardener.
// An error means the specs could not be compared: no verdict, denied
// whatever the enforcement.
func bindingSpecChange(c *shootChange) (string, error) {
	if !c.binding || c.op != admissionv1.Update || c.oldSeed == "" || c.newSeed == "" || c.oldSeed == c.newSeed {
		return "", nil
	}
	changed, err := specFieldsChanged(c.oldRaw, c.raw)
	if err != nil {
		return "", fmt.Errorf("cannot compare the old and new spec: %w", err)
	}
	if len(changed) == 0 {
		return "", nil
	}
	return fmt.Sprintf("a binding that moves the Shoot from seed %q to %q may change only spec.seedName, but it also changes %s",
		c.oldSeed, c.newSeed, strings.Join(changed, ", ")), nil
}

// specFieldsChanged lists the top-level spec fields other than seedName that
// differ between two objects, as the API server writes them (a null field
// counts as absent; admissionjson.DecodeSpecMembers).
func specFieldsChanged(oldRaw, newRaw []byte) ([]string, error) {
	oldSpec, err := admissionjson.DecodeSpecMembers(oldRaw)
	if err != nil {
		return nil, fmt.Errorf("old object: %w", err)
	}
	newSpec, err := admissionjson.DecodeSpecMembers(newRaw)
	if err != nil {
		return nil, err
	}
	var changed []string
	seen := sets.New("seedName")
	for _, spec := range []map[string]json.RawMessage{oldSpec, newSpec} {
		for k := range spec {
			if seen.Has(k) {
				continue
			}
			seen.Insert(k)
			if !bytes.Equal(oldSpec[k], newSpec[k]) {
				changed = append(changed, "spec."+k)
			}
		}
	}
	sort.Strings(changed)
	return changed, nil
}
