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

// maxUses bounds the nonces a Signer remembers (about 150 bytes each); each
// stays for at most the token lifetime. Beyond it tokens are refused (fail
// closed), which only costs the privilege of the webhook's own placement.
const maxUses = 1 << 17

// Errors of Redeem besides Verify's.
var (
	ErrReused = errors.New("placement token was already used by another Shoot")
	ErrBusy   = errors.New("too many placement tokens in use; try again later")
)

type use struct {
	holder Holder
	expiry time.Time
}

// ledger remembers which Holder used each nonce.
type ledger struct {
	mu      sync.Mutex
	uses    map[string]use
	sweepAt int
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
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.uses == nil {
		l.uses = map[string]use{}
	}
	if u, ok := l.uses[nonce]; ok && !now.After(u.expiry) {
		if u.holder != h {
			return fmt.Errorf("%w: %s used it", ErrReused, u.holder)
		}
		return nil
	}
	if len(l.uses) >= l.sweepAt || len(l.uses) >= maxUses {
		l.sweep(now)
		l.sweepAt = max(1024, 2*len(l.uses))
	}
	if len(l.uses) >= maxUses {
		return ErrBusy
	}
	// Kept a second past the expiry: Verify compares whole seconds.
	l.uses[nonce] = use{holder: h, expiry: expiry.Add(time.Second)}
	return nil
}

func (l *ledger) sweep(now time.Time) {
	for n, u := range l.uses {
		if now.After(u.expiry) {
			delete(l.uses, n)
		}
	}
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
