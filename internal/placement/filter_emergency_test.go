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
	code, text := notEmergencyStopped(NewSeed(stopped))
	assert.Equal(t, EmergencyStopped, code)
	assert.NotEmpty(t, text)
	code, _ = notEmergencyStopped(NewSeed(readySeed("s")))
	assert.Empty(t, code)
}
