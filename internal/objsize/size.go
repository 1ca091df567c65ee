// Package objsize measures the size of a Kubernetes object's JSON the way the
// resource-size limits count it: without status and metadata.managedFields,
// which the user does not write and which would otherwise punish objects for
// Gardener's and the API server's own bookkeeping.
package objsize

import (
	"fmt"

	kjson "sigs.k8s.io/json"
)

// length records the byte length of a JSON value without copying it. A
// non-pointer field sees literal nulls too.
type length struct {
	n   int
	set bool
}

func (l *length) UnmarshalJSON(b []byte) error {
	l.n, l.set = len(b), true
	return nil
}

type envelope struct {
	Status   length `json:"status"`
	Metadata struct {
		ManagedFields length `json:"managedFields"`
	} `json:"metadata"`
}

// Measure returns the number of bytes of raw (a JSON object) less the
// "status" member and the "metadata.managedFields" member (key, colon, value
// and one separating comma each). Only those two values are looked at; the
// rest is scanned, never decoded into maps.
func Measure(raw []byte) (int64, error) {
	if len(raw) == 0 {
		return 0, fmt.Errorf("object: empty")
	}
	var e envelope
	// As the API server reads it: only the exact keys "status" and
	// "managedFields" are left out (encoding/json would also take "Status",
	// and an attacker's big "Status" member would escape the count), and the
	// last of duplicate keys wins.
	if err := kjson.UnmarshalCaseSensitivePreserveInts(raw, &e); err != nil {
		return 0, fmt.Errorf("object: not a JSON object: %w", err)
	}
	size := int64(len(raw))
	if e.Status.set {
		size -= int64(len(`"status":,`) + e.Status.n)
	}
	if e.Metadata.ManagedFields.set {
		size -= int64(len(`"managedFields":,`) + e.Metadata.ManagedFields.n)
	}
	if size < 2 {
		size = 2 // never less than "{}"
	}
	return size, nil
}
