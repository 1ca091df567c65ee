package operationsapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// AnnotationNoDrain on a Shoot, with the value "true", keeps every drain
// from moving it: the drain lists it OptedOut and cannot end Drained while
// it stays. Any other value is no opt-out. A Shoot's owner may set it, as
// they may set the maintenance window a drain can be told to wait for.
const AnnotationNoDrain = "operations.seedwarden.io/no-drain"

// AnnotationLastDrainMove on a Shoot records the last move a drain made of
// it (a Move, as JSON), written with the binding that starts the
// migration. The scale-in rule "a Shoot moved by a drain is not moved
// again within a stated time" reads it through MovedWithin.
const AnnotationLastDrainMove = "operations.seedwarden.io/last-drain-move"

// maxMoveBytes bounds the annotation a parse reads: four names of at most
// 253 characters, a time and the keys fit in well under 2 KiB.
const maxMoveBytes = 2048

// Move is one move of a Shoot by a drain (an annotation's value, not
// an API type).
//
// +kubebuilder:object:generate=false
type Move struct {
	// Drain is the SeedDrain's name.
	Drain string `json:"drain"`
	// From and To are the seeds.
	From string `json:"from"`
	To   string `json:"to"`
	// At is when the drain wrote the binding.
	At time.Time `json:"at"`
}

// OptedOut says whether a Shoot's annotations opt it out of drains.
func OptedOut(annotations map[string]string) bool {
	return annotations[AnnotationNoDrain] == "true"
}

// Encode is the value of AnnotationLastDrainMove for m (At in UTC, to the
// second).
func (m Move) Encode() string {
	m.At = m.At.UTC().Truncate(time.Second)
	b, err := json.Marshal(m)
	if err != nil {
		// Strings and a time in its range always marshal.
		return ""
	}
	return string(b)
}

// ParseMove reads a value of AnnotationLastDrainMove. Unknown keys are
// refused, as are a missing time, a missing seed and a value past 2 KiB;
// the error names the annotation and the value.
func ParseMove(value string) (Move, error) {
	if len(value) > maxMoveBytes {
		return Move{}, fmt.Errorf("annotation %s: %d bytes: at most %d", AnnotationLastDrainMove, len(value), maxMoveBytes)
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(value)))
	dec.DisallowUnknownFields()
	var m Move
	if err := dec.Decode(&m); err != nil {
		return Move{}, fmt.Errorf("annotation %s=%q: %w", AnnotationLastDrainMove, value, err)
	}
	if dec.More() {
		return Move{}, fmt.Errorf("annotation %s=%q: data after the object", AnnotationLastDrainMove, value)
	}
	var errs []error
	m.At = m.At.UTC()
	if m.At.IsZero() {
		errs = append(errs, errors.New("no time (at)"))
	} else if y := m.At.Year(); y < 1 || y > 9999 {
		// An offset can carry 9999-12-31 past what RFC 3339 writes.
		errs = append(errs, fmt.Errorf("time (at) in year %d in UTC: want 1 to 9999", y))
	}
	if strings.TrimSpace(m.To) == "" {
		errs = append(errs, errors.New("no destination seed (to)"))
	}
	if err := errors.Join(errs...); err != nil {
		return Move{}, fmt.Errorf("annotation %s=%q: %w", AnnotationLastDrainMove, value, err)
	}
	return m, nil
}

// LastMove is the move recorded in a Shoot's annotations: ok false when
// there is none; an error when the value does not parse.
func LastMove(annotations map[string]string) (m Move, ok bool, err error) {
	value, found := annotations[AnnotationLastDrainMove]
	if !found {
		return Move{}, false, nil
	}
	m, err = ParseMove(value)
	if err != nil {
		return Move{}, false, err
	}
	return m, true, nil
}

// MovedWithin says whether a drain moved the Shoot less than window
// before now. A move recorded in the future counts as recent (a clock
// ahead must not let a Shoot move twice); a value that does not parse
// counts as no move, since its owner could as well opt out.
func MovedWithin(annotations map[string]string, now time.Time, window time.Duration) bool {
	m, ok, err := LastMove(annotations)
	if !ok || err != nil {
		return false
	}
	return now.Sub(m.At) < window
}
