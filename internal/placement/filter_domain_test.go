package placement

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
)

func TestMatchDomain(t *testing.T) {
	withDefault := func(d string) func(*api.Seed) {
		return func(s *api.Seed) { s.Spec.DNS.Defaults = []api.SeedDNSProviderConfig{{Domain: d}} }
	}
	seeds := []*api.Seed{readySeed("a", withDefault("example.com")), readySeed("b", withDefault("other.org")), readySeed("c")}
	tests := []struct {
		name    string
		domain  *string
		ns      string
		want    []string
		wantErr bool
	}{
		{"no domain", nil, "garden-proj", []string{"a", "b", "c"}, false},
		{"custom domain keeps all", ptr.To("my.custom.io"), "garden-proj", []string{"a", "b", "c"}, false},
		{"managed domain keeps the seeds giving it", ptr.To("shoot.proj.example.com"), "garden-proj", []string{"a"}, false},
		{"managed suffix with wrong project keeps none", ptr.To("shoot.other.example.com"), "garden-proj", []string{}, false},
		{"managed suffix with wrong shoot name keeps none", ptr.To("x.proj.example.com"), "garden-proj", []string{}, false},
		{"managed domain without project is an error", ptr.To("shoot.proj.example.com"), "garden-none", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := snapshotOf(nil, seeds...)
			sh := basicShoot(func(s *api.Shoot) {
				s.Namespace = tt.ns
				if tt.domain != nil {
					s.Spec.DNS = &api.DNS{Domain: tt.domain}
				}
			})
			d := &decider{snap: snap, shoot: sh}
			got, err := d.matchDomain(snap.Seeds)
			if tt.wantErr {
				assert.Error(t, err)
				return
			}
			assert.NoError(t, err)
			assert.Equal(t, tt.want, names(got))
		})
	}
}
