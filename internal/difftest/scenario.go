// Package difftest generates random placement scenarios in the format of the
// conformance corpus (internal/placement/testdata/CONFORMANCE.md) and has them
// decided by Gardener's own scheduler (the oracle binaries that
// hack/gardener-bins.sh builds), so that seedwarden's placement can be checked
// against Gardener on landscapes nobody recorded. It never links Gardener: the
// oracle is a separate process that reads scenarios on stdin.
package difftest

import (
	"encoding/json"
	"fmt"
)

// Scenario is one corpus file: a landscape, a Shoot to place and, once decided,
// the reference's answer.
type Scenario struct {
	Name           string            `json:"name"`
	Strategy       string            `json:"strategy"`
	NetworkOverlap string            `json:"networkOverlap"`
	Objects        []json.RawMessage `json:"objects"`
	Shoot          json.RawMessage   `json:"shoot"`
	Expect         *Expect           `json:"expect,omitempty"`
}

// Expect is the reference's decision: a seed (any of Tied would do as well)
// or unschedulable with the reference's message.
type Expect struct {
	Seed           string   `json:"seed,omitempty"`
	Tied           []string `json:"tied,omitempty"`
	Unschedulable  bool     `json:"unschedulable,omitempty"`
	ReferenceError string   `json:"referenceError,omitempty"`
}

// Answer is what the oracle said about one scenario: an Expect, or the error
// or panic of Gardener itself (which is no decision to compare with).
type Answer struct {
	Name   string  `json:"name"`
	Expect *Expect `json:"expect,omitempty"`
	// Undefined, with Expect, says how Gardener's answer changes with the
	// order its cache lists region configs or Projects in (no defined
	// order); Expect is then the answer for name order.
	Undefined string `json:"undefined,omitempty"`
	Error     string `json:"error,omitempty"`
	Panic     string `json:"panic,omitempty"`
}

// Failed says whether Gardener gave no decision (it errored or panicked).
func (a Answer) Failed() bool { return a.Expect == nil }

// Problem is Gardener's error or panic, prefixed with which it was.
func (a Answer) Problem() string {
	switch {
	case a.Panic != "":
		return "panic: " + a.Panic
	case a.Error != "":
		return "error: " + a.Error
	case a.Expect == nil:
		return "no answer"
	}
	return ""
}

// object is a Kubernetes object as the generator builds it: plain JSON, so it
// can carry any field Gardener reads whether or not seedwarden models it.
type object = map[string]any

// marshal encodes generated objects; they hold only JSON-friendly values.
func marshal(v any) json.RawMessage {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("difftest: generated object does not encode: %v", err))
	}
	return raw
}
