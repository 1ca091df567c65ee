package landscapegen

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLandscapeShape(t *testing.T) {
	objs := Landscape(10, 100)
	assert.Len(t, objs, 3+10+100)
	assert.Equal(t, "seed-00003", Seed(3).Name)
	assert.NotEmpty(t, Seed(0).Spec.Taints, "every seventh seed is tainted")
	assert.Empty(t, Seed(1).Spec.Taints)
	sh := ExistingShoot(50, 10)
	assert.Equal(t, "seed-00000", *sh.Spec.SeedName)
	assert.Equal(t, "seed-00001", *sh.Status.SeedName, "every 50th shoot migrates")
}
