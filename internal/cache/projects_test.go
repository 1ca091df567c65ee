package cache

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seedwarden/seedwarden/internal/placement"
)

func TestProjectForNamespace(t *testing.T) {
	s := NewStore(Options{})
	_, _, ok := s.ProjectForNamespace("garden-dev")
	assert.False(t, ok, "no project yet")

	s.Apply(project("dev", "garden-dev"))
	name, deleting, ok := s.ProjectForNamespace("garden-dev")
	assert.True(t, ok)
	assert.Equal(t, "dev", name)
	assert.False(t, deleting)
	_, _, ok = s.ProjectForNamespace("garden-other")
	assert.False(t, ok, "other namespace")

	del := project("dev", "garden-dev")
	del.ResourceVersion = "2"
	del.DeletionTimestamp = &metav1.Time{}
	s.Apply(del)
	name, deleting, ok = s.ProjectForNamespace("garden-dev")
	assert.True(t, ok)
	assert.Equal(t, "dev", name)
	assert.True(t, deleting)

	s.Apply(project("dev", "garden-moved"))
	_, _, ok = s.ProjectForNamespace("garden-dev")
	assert.False(t, ok, "namespace given up")
	_, _, ok = s.ProjectForNamespace("garden-moved")
	assert.True(t, ok)

	s.Remove(project("dev", ""))
	_, _, ok = s.ProjectForNamespace("garden-moved")
	assert.False(t, ok, "project removed")
}

func TestProjectNamespaceChange(t *testing.T) {
	s := NewStore(Options{})
	s.Apply(project("p", "ns1"))
	s.Apply(project("p", "ns2"))
	assert.Equal(t, map[string]*placement.Project{"ns2": {Name: "p"}}, s.Snapshot().Projects)
	s.Apply(project("p", ""))
	assert.Empty(t, s.Snapshot().Projects)
}

// A Project's labels reach placement (seed pools' projectSelector), and a
// change of labels alone is published.
func TestProjectLabels(t *testing.T) {
	s := NewStore(Options{})
	p := project("p", "ns")
	p.Labels = map[string]string{"tier": "prod"}
	s.Apply(p)
	assert.Equal(t, map[string]*placement.Project{"ns": {Name: "p", Labels: map[string]string{"tier": "prod"}}}, s.Snapshot().Projects)
	p = project("p", "ns")
	p.ResourceVersion = "2"
	p.Labels = map[string]string{"tier": "dev"}
	s.Apply(p)
	assert.Equal(t, map[string]string{"tier": "dev"}, s.Snapshot().Projects["ns"].Labels)
}
