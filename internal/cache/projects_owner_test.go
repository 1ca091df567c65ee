package cache

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Two Projects claiming one namespace (an API server refuses that; a static
// landscape may hold it): the first by name owns it, whatever the arrival
// order (Gardener's scheduler takes whichever its cache lists first).
func TestFirstProjectByNameOwnsANamespace(t *testing.T) {
	owner := func(s *Store) string {
		name, _, _ := s.ProjectForNamespace("garden-x")
		return name
	}
	s := NewStore(Options{})
	s.Apply(project("zzz", "garden-x"))
	assert.Equal(t, "zzz", owner(s))
	s.Apply(project("proj", "garden-x"))
	assert.Equal(t, "proj", owner(s), "the first by name, though it came later")
	aaa := project("aaa", "garden-x")
	aaa.DeletionTimestamp = &metav1.Time{}
	s.Apply(aaa)
	name, deleting, _ := s.ProjectForNamespace("garden-x")
	assert.Equal(t, "aaa", name)
	assert.True(t, deleting, "the owner's own deletion state")

	s.Remove(project("aaa", ""))
	assert.Equal(t, "proj", owner(s), "the next one takes over")
	s.Apply(project("proj", "garden-y"))
	assert.Equal(t, "zzz", owner(s), "proj moved away")
	name, _, _ = s.ProjectForNamespace("garden-y")
	assert.Equal(t, "proj", name)
	s.Remove(project("zzz", ""))
	_, _, ok := s.ProjectForNamespace("garden-x")
	assert.False(t, ok)
}
