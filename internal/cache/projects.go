package cache

import (
	"slices"

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

// projectClaim is the namespace a Project claims (spec.namespace).
type projectClaim struct {
	namespace string
	deleting  bool
	// labels are the Project's, for seed pools' projectSelector.
	labels map[string]string
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
	prev := s.projectNamespaces[o.Name].namespace
	s.unclaimLocked(o.Name, prev)
	if ns == "" {
		delete(s.projectNamespaces, o.Name)
	} else {
		s.projectNamespaces[o.Name] = projectClaim{namespace: ns, deleting: o.DeletionTimestamp != nil, labels: o.Labels}
		list := s.claimants[ns]
		i, _ := slices.BinarySearch(list, o.Name)
		s.claimants[ns] = slices.Insert(list, i, o.Name)
	}
	s.publishOwnersLocked(prev, ns)
}

func (s *Store) removeProject(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forgetLocked(objectKey{kind: kindProject, name: name})
	claim, ok := s.projectNamespaces[name]
	if !ok {
		return
	}
	delete(s.projectNamespaces, name)
	s.unclaimLocked(name, claim.namespace)
	s.publishOwnersLocked(claim.namespace)
}

// unclaimLocked drops the Project from the claimants of ns.
func (s *Store) unclaimLocked(name, ns string) {
	list := s.claimants[ns]
	if i, found := slices.BinarySearch(list, name); found {
		list = slices.Delete(list, i, i+1)
	}
	if len(list) == 0 {
		delete(s.claimants, ns)
		return
	}
	s.claimants[ns] = list
}

// publishOwnersLocked publishes who owns each of the namespaces given ("" is
// skipped). Only one Project may claim a namespace, but should two (an API
// server refuses that; a static landscape may not), the first by name owns
// it: Gardener's scheduler takes the first its cache lists, an order that is
// not defined, so name order is seedwarden's choice of a stable answer.
func (s *Store) publishOwnersLocked(namespaces ...string) {
	n := s.land.Load().clone()
	projects := n.snap.Projects
	for _, ns := range namespaces {
		if ns == "" {
			continue
		}
		list := s.claimants[ns]
		if len(list) == 0 {
			projects = cloneMapWithout(projects, ns)
			continue
		}
		owner := list[0]
		claim := s.projectNamespaces[owner]
		projects = cloneMapWith(projects, ns, &placement.Project{Name: owner, Deleting: claim.deleting, Labels: claim.labels})
	}
	n.snap.Projects = projects
	s.publish(n)
}
