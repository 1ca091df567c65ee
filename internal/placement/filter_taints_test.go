package placement

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
)

func TestTaintsTolerated(t *testing.T) {
	taint := func(k string, v *string) api.SeedTaint { return api.SeedTaint{Key: k, Value: v} }
	tol := func(k string, v *string) api.Toleration { return api.Toleration{Key: k, Value: v} }
	tests := []struct {
		name   string
		taints []api.SeedTaint
		tols   []api.Toleration
		ok     bool
	}{
		{"no taints", nil, nil, true},
		{"key tolerated", []api.SeedTaint{taint("a", nil)}, []api.Toleration{tol("a", nil)}, true},
		{"untolerated key", []api.SeedTaint{taint("a", nil)}, []api.Toleration{tol("b", nil)}, false},
		{"key tolerated, taint without value", []api.SeedTaint{taint("a", nil)}, []api.Toleration{tol("a", ptr.To("x"))}, true},
		{"value must match", []api.SeedTaint{taint("a", ptr.To("x"))}, []api.Toleration{tol("a", ptr.To("y"))}, false},
		{"value matches", []api.SeedTaint{taint("a", ptr.To("x"))}, []api.Toleration{tol("a", ptr.To("x"))}, true},
		{"valued taint, toleration without value", []api.SeedTaint{taint("a", ptr.To("x"))}, []api.Toleration{tol("a", nil)}, false},
		{"more taints than tolerations fails outright", []api.SeedTaint{taint("a", nil), taint("a", nil)}, []api.Toleration{tol("a", nil)}, false},
		{"last toleration of a key wins", []api.SeedTaint{taint("a", ptr.To("x"))}, []api.Toleration{tol("a", ptr.To("x")), tol("a", ptr.To("y"))}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.ok, taintsTolerated(tt.taints, tt.tols))
		})
	}
}
