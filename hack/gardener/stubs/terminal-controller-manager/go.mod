// Gardener's go.mod requires this module, which the Go module proxy here does
// not serve; gardener-apiserver and gardener-scheduler never import it, so an
// empty module stands in for it.
module github.com/gardener/terminal-controller-manager

go 1.24
