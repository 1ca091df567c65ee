package handlers

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/seedwarden/seedwarden/internal/cache"
)

func TestEscapeJSONPointer(t *testing.T) {
	assert.Equal(t, "seedwarden.io~1reservation", escapeJSONPointer(cache.AnnotationReservation))
	assert.Equal(t, "a~0b~1c", escapeJSONPointer("a~b/c"))
}
