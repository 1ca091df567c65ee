package seedscale

// scan finds what scanPlain finds with O(log(hi-from)) simulations per
// metric instead of one per count: it probes from, from+1, from+3, from+7,
// ... until every metric holds (or hi), then halves the gap between each
// metric's last count that failed and its first that held. That is exact
// because a target that holds at k holds at k+1: another replica adds room
// and no Shoot (the pending ones are all placed once none is stuck), so
// use per seed and per allocatable only fall, and headroom only grows.
// TestScanFastDecidesAsPlain holds it to scanPlain on generated
// landscapes.
func (r *recommender) scan() error {
	seen := map[int32][]bool{}
	at := func(k int32) ([]bool, error) {
		if v, ok := seen[k]; ok {
			return v, nil
		}
		v, err := r.verdicts(k)
		seen[k] = v
		return v, err
	}
	n := len(r.metrics)
	first, last, done := make([]int32, n), make([]int32, n), make([]bool, n)
	for i := range first {
		first[i], last[i] = -1, r.from-1
	}
	for k, step := r.from, int32(1); ; k, step = min(k+step, r.hi), step*2 {
		met, err := at(k)
		if err != nil {
			return err
		}
		open := false
		for i := range r.metrics {
			switch {
			case done[i] || first[i] >= 0:
			case r.results[i].WouldNotHelp != "":
				r.settle(i, k, met[i]) // k is from: read once
				done[i] = true
			case met[i]:
				first[i] = k
			default:
				last[i], open = k, true
			}
		}
		if !open || k == r.hi {
			break
		}
	}
	for i := range r.metrics {
		if done[i] {
			continue
		}
		if first[i] < 0 {
			r.settle(i, r.hi, false)
			continue
		}
		lo, hi := last[i], first[i]
		for hi-lo > 1 {
			mid := lo + (hi-lo)/2
			met, err := at(mid)
			if err != nil {
				return err
			}
			if met[i] {
				hi = mid
			} else {
				lo = mid
			}
		}
		r.settle(i, hi, true)
	}
	return nil
}
