package placement

// usageMemo is one decision's record of the usage it read of each seed:
// step 10 (capacity) and step 12 (least used, or the scorers) both need a
// seed's usage, and Snapshot.Usage (in the webhook, a map lookup by name)
// costs several times a probe here. Reading each seed's usage once also
// means every step of a decision sees the same usage. It is an open-address
// table keyed by the Seed pointer, probed from the hash of its name, pooled
// with the decider; release clears the slots used.
type usageMemo struct {
	seeds []*Seed // nil: free
	vals  []int64
	used  []uint32 // the slots filled, to clear
}

// usage returns the seed's usage, read from the snapshot once per decision.
func (d *decider) usage(s *Seed) int64 {
	m := &d.usages
	if 2*(len(m.used)+1) > len(m.seeds) {
		m.grow()
	}
	mask := uint64(len(m.seeds) - 1)
	for i := s.nameHash & mask; ; i = (i + 1) & mask {
		switch m.seeds[i] {
		case s:
			return m.vals[i]
		case nil:
			u := d.snap.usage(s)
			m.seeds[i], m.vals[i] = s, u
			m.used = append(m.used, uint32(i))
			return u
		}
	}
}

// grow doubles the table (at least 64 slots), keeping what it holds.
func (m *usageMemo) grow() {
	old, vals, used := m.seeds, m.vals, m.used
	n := max(64, 2*len(old))
	m.seeds, m.vals, m.used = make([]*Seed, n), make([]int64, n), make([]uint32, 0, n/2)
	mask := uint64(n - 1)
	for _, j := range used {
		s := old[j]
		i := s.nameHash & mask
		for m.seeds[i] != nil {
			i = (i + 1) & mask
		}
		m.seeds[i], m.vals[i] = s, vals[j]
		m.used = append(m.used, uint32(i))
	}
}

// reset empties the table, dropping the seeds so old snapshots can be
// collected.
func (m *usageMemo) reset() {
	for _, i := range m.used {
		m.seeds[i] = nil
	}
	m.used = m.used[:0]
}
