package placement

import (
	"slices"
	"sync/atomic"
)

// seedIndex is a compact digest of what the fast path asks of every seed
// first (usable, provider, region, zones), and the seeds sorted into buckets
// by it (fast_buckets.go), so that a decision visits only the seeds of the
// buckets a Shoot makes plausible instead of every seed. Every visited seed
// is still checked in full by fastPass.add: the digest only narrows which
// seeds are visited (hash and fingerprint collisions only widen it), so it
// saves work but never changes a result.
//
// It is cut into chunks of chunkLen seeds by position, so that the index of
// a changed landscape shares the unchanged chunks with its predecessor: after
// a Seed update (the commonest change) a decision builds one chunk, not a
// digest of every seed.
type seedIndex struct {
	n       int
	chunks  []*indexChunk
	buckets *seedBuckets
}

const chunkLen = 64

type indexChunk struct {
	n     int
	seeds [chunkLen]*Seed // the seeds digested (a copy, compared on use)
	recs  [chunkLen]seedRec
}

func (idx *seedIndex) seed(i int) *Seed   { return idx.chunks[i/chunkLen].seeds[i%chunkLen] }
func (idx *seedIndex) rec(i int) *seedRec { return &idx.chunks[i/chunkLen].recs[i%chunkLen] }

// describes reports whether idx digests exactly these seeds.
func (idx *seedIndex) describes(seeds []*Seed) bool {
	if idx.n != len(seeds) {
		return false
	}
	for k, c := range idx.chunks {
		if !slices.Equal(c.seeds[:c.n], seeds[k*chunkLen:k*chunkLen+c.n]) {
			return false
		}
	}
	return true
}

type seedRec struct {
	provider uint64                  // Seed.providerHash
	region   uint64                  // Seed.regionHash
	zoneFP   [inlineZones]zoneFinger // fingerprint of each zone's hash
	nZones   uint8                   // fingerprints set; more than inlineZones: always visited
	flags    recFlags
}

// zoneFinger is 16 bits of a zone's hash, the key of a zone bucket: it
// spares visiting (a cache miss each) nearly all seeds that share no zone.
type zoneFinger uint16

func fingerprint(h uint64) zoneFinger { return zoneFinger(h) }

type recFlags uint8

const (
	recUsable   recFlags = 1 << iota // isUsable: not deleting, visible, ready and not cordoned
	recZoneFree                      // zone selection neither Enforce nor Prefer: worker zones never drop it
)

func newSeedRec(s *Seed) seedRec {
	r := seedRec{provider: s.providerHash, region: s.regionHash}
	if len(s.zones) > inlineZones {
		r.nZones = inlineZones + 1
	} else {
		for i, h := range s.zoneHashes[:len(s.zones)] {
			r.zoneFP[i] = fingerprint(h)
		}
		r.nZones = uint8(len(s.zones))
	}
	if isUsable(s) {
		r.flags |= recUsable
	}
	if s.zoneSel == zoneOther {
		r.flags |= recZoneFree
	}
	return r
}

// minIndexed is the number of seeds from which the fast path uses the
// index. Below it the plain pass costs a microsecond or two, and tools and
// tests that decide on many small snapshots in turn would rebuild the memo
// each time.
const minIndexed = 64

// lastIndex is the index of the seeds most recently decided on. Snapshots
// are immutable and change far less often than decisions are made, so one
// entry serves almost every decision. It is a memo of a pure function of the
// seeds: it is used only when its seeds are exactly the snapshot's (compared
// pointer by pointer, well under a nanosecond per seed), so any number of
// snapshots may be decided on concurrently; a decision on other seeds
// replaces it, sharing what the two have in common (see buildIndex). It is
// not a Snapshot field because whoever assembles a Snapshot (internal/cache,
// which also copies it by value) would have to keep it in step with Seeds;
// the memo needs nobody's cooperation. It keeps the last seeds reachable
// until the next decision on other seeds.
var lastIndex atomic.Pointer[seedIndex]

func indexFor(seeds []*Seed) *seedIndex {
	prev := lastIndex.Load()
	if prev != nil && prev.describes(seeds) {
		return prev
	}
	idx := buildIndex(seeds, prev)
	lastIndex.Store(idx)
	return idx
}

// buildIndex digests seeds, taking from prev what it can: a chunk of prev
// that holds the same seeds at the same positions is shared, and the record
// of a seed prev holds at the same position, or in the common suffix (shifted
// by an addition or removal before it), is copied rather than digested again
// (a record depends only on its Seed, which is immutable). So a seed replaced
// costs one chunk, and one added or removed copies the records after it but
// reads no other Seed. The buckets are prev's when every record is (a seed
// replaced by one digesting the same), prev's with the changed seeds spliced
// in when few changed, else built again.
func buildIndex(seeds []*Seed, prev *seedIndex) *seedIndex {
	idx := &seedIndex{n: len(seeds), chunks: make([]*indexChunk, (len(seeds)+chunkLen-1)/chunkLen)}
	head, tail := commonEnds(prev, seeds)
	sameRecs := prev != nil && prev.n == len(seeds)
	for k := range idx.chunks {
		lo, hi := k*chunkLen, min((k+1)*chunkLen, len(seeds))
		if c := prev.sameChunk(k, seeds[lo:hi]); c != nil {
			idx.chunks[k] = c
			continue
		}
		c := &indexChunk{n: hi - lo}
		for i := lo; i < hi; i++ {
			c.seeds[i-lo] = seeds[i]
			switch {
			case prev != nil && i < prev.n && prev.seed(i) == seeds[i]:
				c.recs[i-lo] = *prev.rec(i)
			case i >= len(seeds)-tail:
				c.recs[i-lo] = *prev.rec(i + prev.n - len(seeds))
			default:
				c.recs[i-lo] = newSeedRec(seeds[i])
				sameRecs = sameRecs && c.recs[i-lo] == *prev.rec(i)
			}
		}
		idx.chunks[k] = c
	}
	switch end := len(seeds) - tail; {
	case sameRecs:
		idx.buckets = prev.buckets
	case prev != nil && end-head <= max(chunkLen, len(seeds)/8):
		idx.buckets = prev.buckets.splice(idx, head, end, prev.n-tail)
	default:
		idx.buckets = newSeedBuckets(idx, 0, len(seeds))
	}
	return idx
}

// commonEnds returns how many seeds at the start prev and seeds share, and
// how many at the end, not counting those, position by position.
func commonEnds(prev *seedIndex, seeds []*Seed) (head, tail int) {
	if prev == nil {
		return 0, 0
	}
	n := min(prev.n, len(seeds))
	for head < n && prev.seed(head) == seeds[head] {
		head++
	}
	for tail < n-head && prev.seed(prev.n-1-tail) == seeds[len(seeds)-1-tail] {
		tail++
	}
	return head, tail
}

// sameChunk returns chunk k of idx (nil or not) if it holds exactly seeds.
func (idx *seedIndex) sameChunk(k int, seeds []*Seed) *indexChunk {
	if idx == nil || k >= len(idx.chunks) {
		return nil
	}
	if c := idx.chunks[k]; c.n == len(seeds) && slices.Equal(c.seeds[:c.n], seeds) {
		return c
	}
	return nil
}
