package placement

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestProviderMatches(t *testing.T) {
	tests := []struct {
		name      string
		seedType  string
		shootType string
		enabled   []string
		ok        bool
	}{
		{"same type without list", "aws", "aws", nil, true},
		{"other type without list", "gcp", "aws", nil, false},
		{"listed type", "gcp", "aws", []string{"gcp", "azure"}, true},
		{"list without the seed's type, even the shoot's own", "aws", "aws", []string{"gcp"}, false},
		{"wildcard", "openstack", "aws", []string{"*"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewSeed(readySeed("s", withRegion(tt.seedType, "r")))
			keep, why := providerMatches(tt.shootType, tt.enabled)
			assert.Equal(t, tt.ok, keep(s))
			if !tt.ok {
				code, text := why(s)
				assert.Contains(t, text, tt.seedType)
				assert.Contains(t, []ReasonCode{ProviderMismatch, ProviderNotEnabled}, code)
			}
		})
	}
}
