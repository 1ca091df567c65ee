package cache

import (
	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// ProjectForNamespace returns the Project whose spec.namespace is ns and
// whether it is being deleted (has a deletionTimestamp); ok is false when no
// known Project claims ns. It reads the published snapshot: O(1), no lock.
func (s *Store) ProjectForNamespace(ns string) (name string, deleting, ok bool) {
	p := s.land.Load().snap.Projects[ns]
	if p == nil {
		return "", false, false
	}
	return p.Name, p.Deleting, true
}

func (s *Store) applyProject(o *api.Project) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.changedLocked(objectKey{kind: kindProject, name: o.Name}, o.ResourceVersion) {
		return
	}
	ns := ""
	if o.Spec.Namespace != nil {
		ns = *o.Spec.Namespace
	}
	prev, hadPrev := s.projectNamespaces[o.Name]
	n := s.land.Load().clone()
	projects := n.snap.Projects
	if hadPrev && prev != ns {
		projects = cloneMapWithout(projects, prev)
	}
	if ns == "" {
		delete(s.projectNamespaces, o.Name)
	} else {
		s.projectNamespaces[o.Name] = ns
		projects = cloneMapWith(projects, ns, &placement.Project{Name: o.Name, Deleting: o.DeletionTimestamp != nil})
	}
	n.snap.Projects = projects
	s.publish(n)
}

func (s *Store) removeProject(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forgetLocked(objectKey{kind: kindProject, name: name})
	ns, ok := s.projectNamespaces[name]
	if !ok {
		return
	}
	delete(s.projectNamespaces, name)
	n := s.land.Load().clone()
	n.snap.Projects = cloneMapWithout(n.snap.Projects, ns)
	s.publish(n)
}
