package seedscale

// What each metric asks for: the first replica count, from the floor up,
// at which it holds. scanPlain is the specification; scan (scan_fast.go)
// finds the same counts with fewer simulations.

// verdicts says, per metric, whether its target holds with k replicas,
// the pending Shoots placed. No target holds while a pending Shoot that a
// new seed would take finds no seed: those Shoots are the set's demand
// whatever the averages say. A Headroom metric whose Shoots new seeds
// would not take is the exception: more seeds change nothing for it.
func (r *recommender) verdicts(k int32) ([]bool, error) {
	o, err := r.run(k, true)
	if err != nil {
		return nil, err
	}
	stuck := r.stuck(o)
	out := make([]bool, len(r.metrics))
	for i := range r.metrics {
		v, err := r.read(&r.metrics[i], o)
		if err != nil {
			return nil, err
		}
		out[i] = v.met && (!stuck || r.results[i].WouldNotHelp != "")
	}
	return out, nil
}

// settle records metric i's answer: k replicas, met or not. A met target
// needs no reason why seeds would not help.
func (r *recommender) settle(i int, k int32, met bool) {
	res := &r.results[i]
	res.Replicas, res.Met = k, met
	if met {
		res.WouldNotHelp, res.WouldNotHelpCode = "", ""
	}
}

// scanPlain simulates from, from+1, ... replicas until every metric holds
// (or hi), recording for each metric the first count at which it does; a
// metric that never holds asks for hi. A Headroom metric whose Shoots new
// seeds would not take is read once, at from, and asks for no more.
func (r *recommender) scanPlain() error {
	done := make([]bool, len(r.metrics))
	open := len(r.metrics)
	for k := r.from; k <= r.hi && open > 0; k++ {
		met, err := r.verdicts(k)
		if err != nil {
			return err
		}
		for i := range r.metrics {
			switch {
			case done[i]:
				continue
			case r.results[i].WouldNotHelp != "" || met[i]:
				r.settle(i, k, met[i])
				done[i] = true
				open--
			default:
				r.settle(i, k, false)
			}
		}
	}
	return nil
}
