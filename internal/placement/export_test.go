package placement

import "github.com/seedwarden/seedwarden/internal/api"

// Pass and Run expose run's passes to the external tests, which build
// snapshots through internal/cache (an import cycle for this package's own
// tests).
type Pass = pass

const (
	PassFast    = passFast
	PassOrdered = passOrdered
	PassExplain = passExplain
	PassScan    = passScan
	PassIndexed = passIndexed
	MinIndexed  = minIndexed
	InlineZones = inlineZones
)

func Run(snap *Snapshot, shoot *api.Shoot, opts Options, p Pass) Decision {
	return run(snap, shoot, opts, p)
}
