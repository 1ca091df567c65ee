package placement

import (
	"math/bits"
	"slices"
)

// seedBuckets sorts the usable seeds of a seed index by provider, then by
// zone and by region, as positions in the index, so that the fast path
// (fast.go) visits only the buckets a Shoot's provider, worker zones and
// region (fast_narrow.go) leave plausible instead of digesting every seed.
// It is a pure function of the index's records: an index whose records
// equal its predecessor's, position by position (a Seed's status updated,
// the commonest change), shares its buckets; any other change builds them
// again, once per landscape change, not per decision. Keys are the record's
// hashes and zone fingerprints, so a collision only adds a bucket's seeds to
// those visited; every seed visited is still checked in full by fastPass.add.
type seedBuckets struct {
	byProvider map[uint64]*providerBucket
}

// providerBucket holds the positions, ascending, of the usable seeds of one
// provider hash.
type providerBucket struct {
	all []int32
	// anyZone are the seeds worker-pool zones cannot rule out by their
	// records: zone selection neither Enforce nor Prefer, or more zones
	// than a record fingerprints.
	anyZone []int32
	// byZone are the other seeds by the fingerprint of each zone they offer.
	byZone map[zoneFinger][]int32
	// byRegion are all seeds by region hash.
	byRegion map[uint64][]int32
}

// newSeedBuckets sorts the seeds at positions lo to hi of idx.
func newSeedBuckets(idx *seedIndex, lo, hi int) *seedBuckets {
	b := &seedBuckets{byProvider: map[uint64]*providerBucket{}}
	for i := lo; i < hi; i++ {
		r := idx.rec(i)
		if r.flags&recUsable == 0 {
			continue
		}
		pb := b.byProvider[r.provider]
		if pb == nil {
			pb = newProviderBucket()
			b.byProvider[r.provider] = pb
		}
		pos := int32(i)
		pb.all = append(pb.all, pos)
		pb.byRegion[r.region] = append(pb.byRegion[r.region], pos)
		if r.flags&recZoneFree != 0 || r.nZones > inlineZones {
			pb.anyZone = append(pb.anyZone, pos)
			continue
		}
		for _, fp := range r.zoneFP[:r.nZones] {
			// A seed listing a zone twice (or two zones of one
			// fingerprint) is filed once per fingerprint.
			if l := pb.byZone[fp]; len(l) == 0 || l[len(l)-1] != pos {
				pb.byZone[fp] = append(l, pos)
			}
		}
	}
	return b
}

func newProviderBucket() *providerBucket {
	return &providerBucket{byZone: map[zoneFinger][]int32{}, byRegion: map[uint64][]int32{}}
}

// splice returns the buckets of idx, which holds the seeds of b's index
// except that positions lo to hi of idx replace lo to prevHi of b's: the
// seeds in between sorted afresh, those after shifted, and every list and
// bucket the change leaves alone shared. It equals newSeedBuckets(idx, 0,
// idx.n) and costs, instead of a map lookup per seed and key, one per key.
func (b *seedBuckets) splice(idx *seedIndex, lo, hi, prevHi int) *seedBuckets {
	win := newSeedBuckets(idx, lo, hi)
	sp := splicer{lo: int32(lo), prevHi: int32(prevHi), shift: int32(hi - prevHi)}
	out := &seedBuckets{byProvider: make(map[uint64]*providerBucket, len(b.byProvider)+len(win.byProvider))}
	for h, pb := range b.byProvider {
		if merged := sp.bucket(pb, win.byProvider[h]); merged != nil {
			out.byProvider[h] = merged
		}
	}
	for h, wb := range win.byProvider {
		if _, ok := b.byProvider[h]; !ok {
			out.byProvider[h] = wb
		}
	}
	return out
}

type splicer struct{ lo, prevHi, shift int32 }

// bucket merges old (nil: none) with the window's win (nil: none); nil
// when no seed is left.
func (sp splicer) bucket(old, win *providerBucket) *providerBucket {
	if win == nil {
		win = newProviderBucket()
	}
	if len(win.all) == 0 && !sp.touches(old.all) {
		return old
	}
	pb := &providerBucket{all: sp.list(old.all, win.all), anyZone: sp.list(old.anyZone, win.anyZone)}
	if len(pb.all) == 0 {
		return nil
	}
	pb.byZone, pb.byRegion = spliceMap(sp, old.byZone, win.byZone), spliceMap(sp, old.byRegion, win.byRegion)
	return pb
}

func spliceMap[K comparable](sp splicer, old, win map[K][]int32) map[K][]int32 {
	out := make(map[K][]int32, len(old))
	for k, l := range old {
		if merged := sp.list(l, win[k]); len(merged) > 0 {
			out[k] = merged
		}
	}
	for k, l := range win {
		if _, ok := old[k]; !ok {
			out[k] = l
		}
	}
	return out
}

// touches reports whether old holds a position the window replaces or
// shifts.
func (sp splicer) touches(old []int32) bool {
	i, _ := slices.BinarySearch(old, sp.lo)
	return i < len(old) && (sp.shift != 0 || old[i] < sp.prevHi)
}

// list is old without the positions the window replaces, with the
// window's, and with the later ones shifted; old itself when nothing
// changes; nil when empty.
func (sp splicer) list(old, win []int32) []int32 {
	i, _ := slices.BinarySearch(old, sp.lo)
	j, _ := slices.BinarySearch(old, sp.prevHi)
	if i == j && len(win) == 0 && (sp.shift == 0 || j == len(old)) {
		return old
	}
	if i+len(win)+len(old)-j == 0 {
		return nil
	}
	out := make([]int32, 0, i+len(win)+len(old)-j)
	out = append(append(out, old[:i]...), win...)
	for _, p := range old[j:] {
		out = append(out, p+sp.shift)
	}
	return out
}

// candidates passes to f.add, in index order, every usable seed of a
// provider f may accept that, when zones is set, zone selection never drops
// or that may offer one of the worker pools' zones (a superset of the Prefer
// set C), and that f's narrowing may keep. marks is a cleared bit set of at
// least idx.n bits, left cleared: the buckets mark positions in it, so the
// union of several buckets comes out once each and in order.
func (idx *seedIndex) candidates(f *fastPass, zones bool, marks []uint64) {
	b := idx.buckets
	switch {
	case f.narrow.byProvider:
		if f.prov.matchesHash(f.narrow.provHash) {
			b.byProvider[f.narrow.provHash].mark(f, zones, marks)
		}
	case f.prov.any || len(f.prov.names) > maxHashed:
		for _, pb := range b.byProvider {
			pb.mark(f, zones, marks)
		}
	case f.prov.names == nil:
		b.byProvider[f.prov.hashes[0]].mark(f, zones, marks)
	default:
		for _, h := range f.prov.hashes[:len(f.prov.names)] {
			b.byProvider[h].mark(f, zones, marks)
		}
	}
	for w, word := range marks {
		if word == 0 {
			continue
		}
		marks[w] = 0
		for word != 0 {
			f.add(idx.seed(w*64 + bits.TrailingZeros64(word)))
			word &= word - 1
		}
	}
}

// mark sets the positions of the bucket's seeds f may keep: those offering
// a worker zone under zones, else those of a narrowed region, else all,
// whichever lists fewer (nil: no seed of that provider).
func (pb *providerBucket) mark(f *fastPass, zones bool, marks []uint64) {
	if pb == nil {
		return
	}
	var byZone, byRegion int
	if zones && len(f.zone.more) == 0 {
		byZone = len(pb.anyZone)
		for _, h := range f.zone.hashes[:f.zone.n] {
			byZone += len(pb.byZone[fingerprint(h)])
		}
	} else {
		byZone = len(pb.all)
	}
	if n := f.narrow.n; n > 0 {
		for _, h := range f.narrow.regionHashes[:n] {
			byRegion += len(pb.byRegion[h])
		}
	} else {
		byRegion = len(pb.all)
	}
	switch {
	case byZone <= byRegion && byZone < len(pb.all):
		setBits(marks, pb.anyZone)
		for _, h := range f.zone.hashes[:f.zone.n] {
			setBits(marks, pb.byZone[fingerprint(h)])
		}
	case byRegion < len(pb.all):
		for _, h := range f.narrow.regionHashes[:f.narrow.n] {
			setBits(marks, pb.byRegion[h])
		}
	default:
		setBits(marks, pb.all)
	}
}

func setBits(marks []uint64, positions []int32) {
	for _, p := range positions {
		marks[p/64] |= 1 << (p % 64)
	}
}
