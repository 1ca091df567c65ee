package placementtoken

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Forged mint-and-redeem pairs (client authentication off) used to fill the
// one ledger of 131,072 nonces; every legitimate token was then refused
// (ErrBusy) for a token lifetime. Each namespace now has a share of its own.

// oldCapacity is what the single ledger held before namespaces had shares.
const oldCapacity = 1 << 17

// forgePair mints a token as the mutating webhook does for a forged CREATE
// review (request uid i, namespace ns) and redeems it as the binding webhook
// does for the forged validating review of the same Shoot.
func forgePair(g *Signer, ns string, i int) error {
	name := fmt.Sprintf("forged-%d", i)
	s := Subject{Namespace: ns, Name: name, Seed: "seed-1"}
	tok := g.SignRequest(s, fmt.Sprintf("00000000-0000-4000-8000-%012d", i))
	return g.Redeem(tok, s, Holder{UID: fmt.Sprintf("uid-%d", i), Namespace: ns, Name: name})
}

func TestForgedTokenFloodLeavesOtherNamespacesRedeeming(t *testing.T) {
	g, _ := newTestSigner(t)
	const namespaces = 10
	busy := 0
	for i := range oldCapacity + 1 {
		if err := forgePair(g, fmt.Sprintf("garden-flood-%d", i%namespaces), i); err != nil {
			require.ErrorIs(t, err, ErrBusy)
			busy++
		}
	}
	assert.Equal(t, oldCapacity+1-namespaces*MaxUsesPerNamespace, busy, "each flooded namespace holds its share, no more")
	assert.Equal(t, namespaces*MaxUsesPerNamespace, entries(&g.used))

	// A legitimate CREATE in another Project's namespace keeps its
	// placement, through the API server's repeated calls.
	s := Subject{Namespace: "garden-dev", Name: "crazy-botany", Seed: "seed-1"}
	tok := g.SignRequest(s, "7b6f0a4e-1c1e-4a43-9d43-6f2b3f0e9a11")
	h := Holder{UID: "5c3e", Namespace: "garden-dev", Name: "crazy-botany"}
	require.NoError(t, g.Redeem(tok, s, h))
	require.NoError(t, g.Redeem(tok, s, h))
}

// A flood at 1,000 pairs a second over n namespaces, for two token
// lifetimes of the test signer (a minute) and then some: each second, a legitimate token
// of another namespace redeems, and no namespace holds more than its share.
// (The ledger's total also counts expired entries not yet swept: a sweep of
// every namespace comes when the total has doubled.)
func TestTokenFloodAtAThousandASecond(t *testing.T) {
	for _, n := range []int{1, 100} {
		t.Run(fmt.Sprintf("%d namespaces", n), func(t *testing.T) {
			g, now := newTestSigner(t)
			most, refused, i := 0, 0, 0
			for sec := range 125 {
				for range 1000 {
					if err := forgePair(g, fmt.Sprintf("garden-flood-%d", i%n), i); err != nil {
						refused++
					}
					i++
				}
				s := Subject{Namespace: "garden-dev", Name: fmt.Sprintf("legit-%d", sec), Seed: "seed-1"}
				h := Holder{UID: fmt.Sprint("legit-uid-", sec), Namespace: s.Namespace, Name: s.Name}
				require.NoError(t, g.Redeem(g.Sign(s), s, h), "second %d", sec)
				most = max(most, entries(&g.used))
				for ns, u := range g.used.namespaces {
					require.LessOrEqual(t, len(u.uses), MaxUsesPerNamespace, "namespace %s, second %d", ns, sec)
				}
				*now = now.Add(time.Second)
			}
			t.Logf("%d namespaces: at most %d entries held, %d of %d forged pairs refused", n, most, refused, i)
		})
	}
}

// BenchmarkLedgerMemory reports the heap one namespace's full share takes.
func BenchmarkLedgerMemory(b *testing.B) {
	now := time.Unix(1_700_000_000, 0)
	var before, after runtime.MemStats
	for range b.N {
		runtime.GC()
		runtime.ReadMemStats(&before)
		l := &ledger{}
		for j := range MaxUsesPerNamespace {
			// Sign's nonces have 26 characters, uids 36, Shoot names
			// up to 21 in Gardener.
			nonce := fmt.Sprintf("%026d", j)
			h := Holder{UID: fmt.Sprintf("%036d", j), Namespace: "garden-flood-0123456789", Name: fmt.Sprintf("forged-%014d", j)}
			if err := l.claim(nonce, h, now.Add(time.Minute), now); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/MaxUsesPerNamespace, "B/entry")
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/1024, "KiB/namespace")
		runtime.KeepAlive(l)
	}
}

// BenchmarkRedeemBesideAFlood: a legitimate redeem while n namespaces hold
// their full share, against the same redeem in an empty ledger.
func BenchmarkRedeemBesideAFlood(b *testing.B) {
	for _, n := range []int{0, 10, 100} {
		b.Run(fmt.Sprintf("flooded=%d", n), func(b *testing.B) {
			now := time.Unix(1_700_000_000, 0)
			g, err := NewSigner([][]byte{key}, time.Minute, func() time.Time { return now })
			require.NoError(b, err)
			for i := range n * MaxUsesPerNamespace {
				if err := forgePair(g, fmt.Sprintf("garden-flood-%d", i%n), i); err != nil {
					b.Fatal(err)
				}
			}
			// Legitimate Shoots, each redeeming its own token once, over
			// 1,000 other namespaces.
			subjects := make([]Subject, b.N)
			toks := make([]string, b.N)
			for i := range toks {
				subjects[i] = Subject{Namespace: fmt.Sprintf("garden-%d", i%1000), Name: fmt.Sprintf("shoot-%d", i), Seed: "seed-1"}
				toks[i] = g.Sign(subjects[i])
			}
			b.ResetTimer()
			for i := range b.N {
				s := subjects[i]
				if err := g.Redeem(toks[i], s, Holder{UID: fmt.Sprint(i), Namespace: s.Namespace, Name: s.Name}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
