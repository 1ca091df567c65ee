package seeddrain

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
)

func TestInWindow(t *testing.T) {
	at := func(h, m int) time.Time { return time.Date(2026, 12, 2, h, m, 0, 0, time.UTC) }
	window := func(begin, end string) *api.Shoot {
		s := shoot("s", "old")
		s.Spec.Maintenance = &api.Maintenance{TimeWindow: &api.MaintenanceTimeWindow{Begin: begin, End: end}}
		return s
	}
	tests := []struct {
		name  string
		shoot *api.Shoot
		now   time.Time
		want  bool
	}{
		{"no window", shoot("s", "old"), at(3, 0), true},
		{"inside", window("220000+0000", "230000+0000"), at(22, 30), true},
		{"before", window("220000+0000", "230000+0000"), at(21, 59), false},
		{"end is out", window("220000+0000", "230000+0000"), at(23, 0), false},
		{"across midnight, after it", window("230000+0000", "010000+0000"), at(0, 30), true},
		{"across midnight, before it", window("230000+0000", "010000+0000"), at(23, 30), true},
		{"across midnight, outside", window("230000+0000", "010000+0000"), at(12, 0), false},
		{"another zone", window("220000+0100", "230000+0100"), at(21, 30), true},
		{"another zone, outside", window("220000+0100", "230000+0100"), at(22, 30), false},
		{"unreadable", window("22h", "23h"), at(22, 30), false},
	}
	for _, tt := range tests {
		got, why := inWindow(tt.shoot, tt.now)
		assert.Equal(t, tt.want, got, tt.name)
		if !got {
			assert.NotEmpty(t, why, tt.name)
		}
	}
}

func TestMigrationOf(t *testing.T) {
	mk := func(spec, status, typ, state string) *api.Shoot {
		s := shoot("s", spec)
		s.Status.SeedName = ptr.To(status)
		s.Status.LastOperation = &api.LastOperation{Type: typ, State: state, Description: "why"}
		return s
	}
	tests := []struct {
		name  string
		shoot *api.Shoot
		want  progress
	}{
		{"bound, gardenlet not begun", mk("b", "old", "Reconcile", "Succeeded"), running},
		{"migrating", mk("b", "old", opMigrate, "Processing"), running},
		{"migrate failed", mk("b", "old", opMigrate, opFailed), failed},
		{"migrate error", mk("b", "old", opMigrate, opError), failed},
		{"migrate succeeded, status not yet moved", mk("b", "old", opMigrate, opSucceeded), running},
		{"restoring", mk("b", "b", opRestore, "Processing"), running},
		{"restore failed", mk("b", "b", opRestore, opFailed), failed},
		{"restored", mk("b", "b", opRestore, opSucceeded), done},
		{"reconciled after", mk("b", "b", "Reconcile", opSucceeded), done},
	}
	for _, tt := range tests {
		got, _ := migrationOf(tt.shoot, "old", "b")
		assert.Equal(t, tt.want, got, tt.name)
	}
}
