// Package plan answers what-if questions about a landscape with the code
// that places real Shoots: what happens to a seed's Shoots if it is
// drained, where N more Shoots of a kind would go, how many more fit
// (headroom). It works on a View, a copy-on-write overlay of a
// placement.Snapshot: decisions are placement.Decide's, and each Shoot
// placed is counted before the next is decided. Like placement it is pure:
// no clients, no goroutines, no I/O.
package plan
