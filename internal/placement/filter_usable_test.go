package placement

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seedwarden/seedwarden/internal/api"
)

func TestUsable(t *testing.T) {
	now := metav1.Now()
	tests := []struct {
		name string
		seed *api.Seed
		ok   bool
	}{
		{"ready", readySeed("s"), true},
		{"deleting seeds are not usable, like in the reference", readySeed("s", func(s *api.Seed) { s.DeletionTimestamp = &now }), false},
		{"invisible", readySeed("s", func(s *api.Seed) {
			s.Spec.Settings = &api.SeedSettings{Scheduling: &api.SeedSettingScheduling{Visible: false}}
		}), false},
		{"settings without scheduling is visible", readySeed("s", func(s *api.Seed) { s.Spec.Settings = &api.SeedSettings{} }), true},
		{"no last operation", readySeed("s", func(s *api.Seed) { s.Status.LastOperation = nil }), false},
		{"gardenlet unknown", readySeed("s", func(s *api.Seed) { s.Status.Conditions[0].Status = "Unknown" }), false},
		{"no conditions", readySeed("s", func(s *api.Seed) { s.Status.Conditions = nil }), false},
		{"backup without bucket condition", readySeed("s", func(s *api.Seed) { s.Spec.Backup = &api.SeedBackup{Provider: "aws"} }), false},
		{"backup with bucket ready", readySeed("s", func(s *api.Seed) {
			s.Spec.Backup = &api.SeedBackup{Provider: "aws"}
			s.Status.Conditions = append(s.Status.Conditions, api.Condition{Type: api.ConditionBackupBucketsReady, Status: api.ConditionTrue})
		}), true},
		{"bucket condition ignored without backup", readySeed("s", func(s *api.Seed) {
			s.Status.Conditions = append(s.Status.Conditions, api.Condition{Type: api.ConditionBackupBucketsReady, Status: "False"})
		}), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewSeed(tt.seed)
			code, text := usable(s)
			assert.Equal(t, tt.ok, code == "")
			assert.Equal(t, tt.ok, text == "")
			assert.Equal(t, tt.ok, isUsable(s))
		})
	}
}
