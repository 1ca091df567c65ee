package placementtoken

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// Single use. A token names no uid: the mutating webhook signs it before the
// API server assigns one (and, for generateName, the name). So that a token
// copied onto another Shoot is worth nothing, each token carries a nonce,
// and Redeem lets a nonce serve the first Shoot (Holder) that uses it only,
// remembered by this Signer until the token expires. SetCarriers extends
// that memory across replicas as far as the watch reaches: a nonce another
// Shoot is seen to carry is refused too. Either way a copy on a second Shoot
// can cost the first its token (both are then refused), never give it away.

// Holder is the Shoot that uses a token: its uid and name as the validating
// webhook (after the API server assigned both) or the controller sees them.
type Holder struct {
	UID, Namespace, Name string
}

func (h Holder) String() string { return fmt.Sprintf("%s/%s (uid %q)", h.Namespace, h.Name, h.UID) }

// CarrierLookup returns the Shoots the watch has seen carrying a token with
// nonce (cache.Store.TokenCarriers in production).
type CarrierLookup func(nonce string) []Holder

// MaxUsesPerNamespace bounds the nonces a Signer remembers for the Shoots
// of one namespace; each stays for at most the token lifetime. Past it that
// namespace's tokens are refused (fail closed: only the privilege of the
// webhook's own placement is lost) until some expire, and every other
// namespace's go on working. Tokens exist only where the mutating webhook
// places, in namespaces of a Project, so a flood of forged tokens holds at
// most this many entries in each Project namespace it names: about 300 KiB
// (BenchmarkLedgerMemory, 296 bytes an entry), far more than one Project
// creates Shoots in a token lifetime.
const MaxUsesPerNamespace = 1024

// Limits of what a Holder names, Kubernetes' own: a review naming more is
// forged, and is not remembered.
const (
	maxHolderNamespace = 63
	maxHolderName      = 253
	maxHolderUID       = 128
)

// Errors of Redeem besides Verify's.
var (
	ErrReused = errors.New("placement token was already used by another Shoot")
	ErrBusy   = errors.New("too many placement tokens in use; try again later")
	ErrHolder = errors.New("placement token holder is no Shoot: namespace, name or uid too long")
)

type use struct {
	holder Holder
	expiry time.Time
}

// ledger remembers which Holder used each nonce, per namespace.
type ledger struct {
	mu         sync.Mutex
	namespaces map[string]*namespaceUses
	// sweptAt is the second of the last look at every namespace: one a
	// second at most, so expired entries stay a second at most.
	sweptAt int64
}

// namespaceUses are the nonces used by the Shoots of one namespace.
type namespaceUses struct {
	uses map[string]use
	// oldest is the earliest expiry in uses: before it, sweeping frees
	// nothing.
	oldest time.Time
}

// SetCarriers makes Redeem refuse a nonce that lookup says another Shoot
// carries. Call before the Signer is shared.
func (g *Signer) SetCarriers(lookup CarrierLookup) { g.carriers = lookup }

// Redeem verifies token for s (see Verify) and uses it up for holder: the
// same token later verifies for holder only, so the API server's repeated
// calls for one object and the controller's repeated attempts keep working,
// while a copy on another Shoot fails with ErrReused. Dry-run tokens are
// verified only: a dry run stores nothing to hold them. Legacy tokens carry
// no nonce and are not remembered (they verify for one exact name).
func (g *Signer) Redeem(token string, s Subject, holder Holder) error {
	c, err := g.verify(token, s)
	if err != nil || s.DryRun || c.nonce == "" {
		return err
	}
	if g.carriers != nil {
		for _, other := range g.carriers(c.nonce) {
			if other != holder {
				return fmt.Errorf("%w: %s carries it", ErrReused, other)
			}
		}
	}
	return g.used.claim(c.nonce, holder, c.expiry, g.now())
}

func (l *ledger) claim(nonce string, h Holder, expiry, now time.Time) error {
	if len(h.Namespace) > maxHolderNamespace || len(h.Name) > maxHolderName || len(h.UID) > maxHolderUID {
		return ErrHolder
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.namespaces == nil {
		l.namespaces = map[string]*namespaceUses{}
	}
	if now.Unix() > l.sweptAt {
		for name, ns := range l.namespaces {
			if ns.sweep(now); len(ns.uses) == 0 {
				delete(l.namespaces, name)
			}
		}
		l.sweptAt = now.Unix()
	}
	ns := l.namespaces[h.Namespace]
	if ns == nil {
		ns = &namespaceUses{uses: map[string]use{}}
		l.namespaces[h.Namespace] = ns
	}
	u, ok := ns.uses[nonce]
	if ok && !now.After(u.expiry) {
		if u.holder != h {
			return fmt.Errorf("%w: %s used it", ErrReused, u.holder)
		}
		return nil
	}
	if !ok && len(ns.uses) >= MaxUsesPerNamespace {
		ns.sweep(now)
		if len(ns.uses) >= MaxUsesPerNamespace {
			return fmt.Errorf("%w (namespace %q: %d in use)", ErrBusy, h.Namespace, len(ns.uses))
		}
	}
	// Kept a second past the expiry: Verify compares whole seconds.
	u = use{holder: h, expiry: expiry.Add(time.Second)}
	if len(ns.uses) == 0 || u.expiry.Before(ns.oldest) {
		ns.oldest = u.expiry
	}
	ns.uses[nonce] = u
	return nil
}

// sweep forgets the expired nonces. It looks at them only once the oldest
// has expired: a namespace at its share costs one pass a second at most
// (expiries are whole seconds).
func (ns *namespaceUses) sweep(now time.Time) {
	if !now.After(ns.oldest) {
		return
	}
	var oldest time.Time
	for n, u := range ns.uses {
		switch {
		case now.After(u.expiry):
			delete(ns.uses, n)
		case oldest.IsZero() || u.expiry.Before(oldest):
			oldest = u.expiry
		}
	}
	ns.oldest = oldest
}

// Nonce reads the nonce and expiry of a token without verifying it, for
// indexing the Shoots that carry tokens; ok is false for a malformed or
// legacy token.
func Nonce(token string) (nonce string, expiry time.Time, ok bool) {
	p, err := parse(token)
	if err != nil || p.nonce == "" {
		return "", time.Time{}, false
	}
	return p.nonce, p.expiry, true
}
