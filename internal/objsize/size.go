// Package objsize measures a Kubernetes object's JSON the way the
// resource-size limits count it: the object without status and
// metadata.managedFields, which the user does not write and which would
// otherwise punish objects for Gardener's and the API server's own
// bookkeeping, and metadata.managedFields on their own, which have a limit
// of their own.
package objsize

import (
	"fmt"

	kjson "sigs.k8s.io/json"
)

// length records the byte length of a JSON value without copying it. A
// non-pointer field sees literal nulls too.
type length struct {
	n    int
	set  bool
	null bool
}

func (l *length) UnmarshalJSON(b []byte) error {
	l.n, l.set, l.null = len(b), true, string(b) == "null"
	return nil
}

type envelope struct {
	Status   length `json:"status"`
	Metadata struct {
		ManagedFields length `json:"managedFields"`
	} `json:"metadata"`
}

// Sizes are the two measurements of one object, in bytes.
type Sizes struct {
	// Object is the JSON less the "status" member and the
	// "metadata.managedFields" member (key, colon, value and one
	// separating comma each); never less than 2, the size of "{}".
	Object int64
	// ManagedFields is the length of the value of metadata.managedFields
	// as sent (0 when absent or null).
	ManagedFields int64
}

// Measure returns Sizes.Object of raw (a JSON object).
func Measure(raw []byte) (int64, error) {
	s, err := MeasureSizes(raw)
	return s.Object, err
}

// MeasureSizes measures raw (a JSON object) in one scan. Only the values of
// status and metadata.managedFields are looked at, and only for their
// length; the rest is scanned, never decoded into maps.
func MeasureSizes(raw []byte) (Sizes, error) {
	if len(raw) == 0 {
		return Sizes{}, fmt.Errorf("object: empty")
	}
	var e envelope
	// As the API server reads it: only the exact keys "status" and
	// "managedFields" are left out (encoding/json would also take "Status",
	// and an attacker's big "Status" member would escape the count), and the
	// last of duplicate keys wins.
	if err := kjson.UnmarshalCaseSensitivePreserveInts(raw, &e); err != nil {
		return Sizes{}, fmt.Errorf("object: not a JSON object: %w", err)
	}
	return Lengths{
		Object:        int64(len(raw)),
		Status:        e.Status.value(),
		ManagedFields: e.Metadata.ManagedFields.value(),
	}.Sizes(), nil
}

func (l length) value() Value { return Value{Set: l.set, Null: l.null, Len: int64(l.n)} }

// Value is what the count reads of a member left out: whether the object
// has it (the last of duplicates), whether it is a literal null, and the
// length of its value.
type Value struct {
	Set, Null bool
	Len       int64
}

// Lengths are what Sizes are counted from: the object's length in bytes and
// the members left out. MeasureSizes reads them from the object's bytes; a
// reader that measures an object as it streams past (the resource-size
// webhook's, internal/admissionjson) records the same and counts them here,
// so both count alike.
type Lengths struct {
	Object                int64
	Status, ManagedFields Value
}

// Sizes counts l as MeasureSizes does.
func (l Lengths) Sizes() Sizes {
	s := Sizes{Object: l.Object}
	if l.Status.Set {
		s.Object -= int64(len(`"status":,`)) + l.Status.Len
	}
	if mf := l.ManagedFields; mf.Set {
		s.Object -= int64(len(`"managedFields":,`)) + mf.Len
		if !mf.Null {
			s.ManagedFields = mf.Len
		}
	}
	if s.Object < 2 {
		s.Object = 2 // never less than "{}"
	}
	return s
}
