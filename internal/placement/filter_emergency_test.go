package placement

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/seedwarden/seedwarden/internal/api"
)

func TestEmergencyStop(t *testing.T) {
	stopped := readySeed("s", func(s *api.Seed) {
		s.Annotations = map[string]string{api.AnnotationEmergencyStop: "true"}
	})
	assert.NotEmpty(t, notEmergencyStopped(NewSeed(stopped)))
	assert.Empty(t, notEmergencyStopped(NewSeed(readySeed("s"))))
}
