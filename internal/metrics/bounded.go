package metrics

import (
	"sync"

	"k8s.io/apimachinery/pkg/util/sets"
)

// Label values taken from requests are bounded: a
// forged AdmissionReview may name any kind or namespace, and every new value
// is a new series kept for the life of the process.

// OtherLabelValue stands for every value past a label's bound.
const OtherLabelValue = "other"

// Bounds of seedwarden_rejected_resources_total's request-derived labels:
// distinct kinds and namespaces kept before further ones count as "other".
const (
	MaxRejectedKinds      = 32
	MaxRejectedNamespaces = 256
)

// boundedValues admits the first max distinct values of a label; later new
// ones become OtherLabelValue. Safe for concurrent use.
type boundedValues struct {
	mu   sync.Mutex
	seen sets.Set[string]
	max  int
}

func newBoundedValues(maxValues int) *boundedValues {
	return &boundedValues{seen: sets.New[string](), max: maxValues}
}

func (b *boundedValues) value(v string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.seen.Has(v) {
		return v
	}
	if b.seen.Len() >= b.max {
		return OtherLabelValue
	}
	b.seen.Insert(v)
	return v
}
