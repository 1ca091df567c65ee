package handlers

// ProjectLookup finds the Project whose spec.namespace is ns (cache.Store).
type ProjectLookup interface {
	ProjectForNamespace(ns string) (name string, deleting bool, ok bool)
}

// inProject reports whether ns belongs to a Project the cache knows. Only
// such Shoots hold reservations: gardener-apiserver
// refuses Shoots outside a Project's namespace anyway, and a forged review
// naming any other namespace must not take places on seeds. A nil lookup
// knows every namespace (tests and tools without Projects).
func inProject(p ProjectLookup, ns string) bool {
	if p == nil {
		return true
	}
	_, _, ok := p.ProjectForNamespace(ns)
	return ok
}
