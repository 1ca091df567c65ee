package cache

import (
	"sync"
	"time"

	"github.com/seedwarden/seedwarden/internal/placementtoken"
	"k8s.io/apimachinery/pkg/types"
)

// The Shoots that carry a live placement token, by the token's nonce, so a
// token is single-use across replicas too (placementtoken.Signer.Redeem): a
// nonce the watch shows on another Shoot is not this one's. TransformShoot
// keeps the annotation only while the token is live.

// tokenIndex has its own lock: it is written on every Shoot event and read
// by admissions, apart from the counters.
type tokenIndex struct {
	mu      sync.Mutex
	byNonce map[string]map[string]placementtoken.Holder // nonce -> namespace/name -> carrier
	byShoot map[string]string                           // namespace/name -> nonce
}

// indexToken records the nonce of token, the placement-token annotation of
// Shoot namespace/name ("" for none), in place of the one it carried
// before. uid is asked for only when there is a token.
func (s *Store) indexToken(namespace, name string, uid func() types.UID, token string) {
	nonce, _, ok := placementtoken.Nonce(token)
	t := &s.tokens
	t.mu.Lock()
	defer t.mu.Unlock()
	if !ok && len(t.byShoot) == 0 {
		return // the common case: no key to build
	}
	key := namespace + "/" + name
	t.forgetLocked(key)
	if !ok {
		return
	}
	if t.byNonce == nil {
		t.byNonce, t.byShoot = map[string]map[string]placementtoken.Holder{}, map[string]string{}
	}
	if t.byNonce[nonce] == nil {
		t.byNonce[nonce] = map[string]placementtoken.Holder{}
	}
	t.byNonce[nonce][key] = placementtoken.Holder{UID: string(uid()), Namespace: namespace, Name: name}
	t.byShoot[key] = nonce
}

func (s *Store) unindexToken(namespace, name string) {
	s.tokens.mu.Lock()
	defer s.tokens.mu.Unlock()
	if len(s.tokens.byShoot) > 0 {
		s.tokens.forgetLocked(namespace + "/" + name)
	}
}

func (t *tokenIndex) forgetLocked(key string) {
	nonce, ok := t.byShoot[key]
	if !ok {
		return
	}
	delete(t.byShoot, key)
	if delete(t.byNonce[nonce], key); len(t.byNonce[nonce]) == 0 {
		delete(t.byNonce, nonce)
	}
}

// TokenCarriers returns the Shoots the watch shows carrying a token with
// nonce (placementtoken.CarrierLookup). Expiry is not checked here: the
// token being redeemed is live, and so is every copy of it. A Shoot whose
// token expired leaves the index with its next event (TransformShoot drops
// the annotation) or its deletion.
func (s *Store) TokenCarriers(nonce string) []placementtoken.Holder {
	s.tokens.mu.Lock()
	defer s.tokens.mu.Unlock()
	var out []placementtoken.Holder
	for _, h := range s.tokens.byNonce[nonce] {
		out = append(out, h)
	}
	return out
}

// liveToken is the token annotation TransformShoot keeps: a well-formed,
// unexpired token with a nonce (a few per Shoot created in the last token
// lifetime; an established Shoot carries an expired one and pays nothing).
func liveToken(annotations map[string]string, now time.Time) (string, bool) {
	tok, ok := annotations[placementtoken.Annotation]
	if !ok {
		return "", false
	}
	_, expiry, ok := placementtoken.Nonce(tok)
	return tok, ok && !now.After(expiry)
}
