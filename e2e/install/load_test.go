package install

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/placementtoken"
)

// shootLoad sends Shoot CREATEs (server-side dry runs: the webhooks run,
// nothing is stored, no seed fills up) through kube-apiserver at a steady
// rate while a renewal happens. A call failed when the API server refused it
// or when no seed was chosen (the placing webhook fails open, so a failed
// call to it shows as a Shoot without a seed).
type shootLoad struct {
	calls, failed atomic.Int64
	mu            sync.Mutex
	errs          []string // the first few failures
	stop          chan struct{}
	done          sync.WaitGroup
}

// loadRate is the load of the renewal tests, in Shoots per second.
const loadRate = 5

func startShootLoad(e *env) *shootLoad {
	l := &shootLoad{stop: make(chan struct{})}
	l.done.Add(1)
	go func() {
		defer l.done.Done()
		tick := time.NewTicker(time.Second / loadRate)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-l.stop:
				return
			case <-tick.C:
			}
			l.done.Add(1)
			go func() { defer l.done.Done(); l.one(e, i) }()
		}
	}()
	return l
}

func (l *shootLoad) one(e *env, i int) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	u := shootObject(fmt.Sprintf("load-%d", i))
	err := e.c.Create(ctx, u, client.DryRunAll)
	if err == nil && u.GetAnnotations()[placementtoken.SeedAnnotation] == "" {
		if seed, _, _ := unstructured.NestedString(u.Object, "spec", "seedName"); seed == "" {
			err = fmt.Errorf("shoot %s: no seed chosen (the placing webhook failed open)", u.GetName())
		}
	}
	l.calls.Add(1)
	if err != nil {
		l.failed.Add(1)
		l.mu.Lock()
		if len(l.errs) < 5 {
			l.errs = append(l.errs, fmt.Sprintf("%s: %v", time.Now().Format("15:04:05.000"), err))
		}
		l.mu.Unlock()
	}
}

// finish stops the load and asserts that no call failed.
func (l *shootLoad) finish(t *testing.T) {
	t.Helper()
	close(l.stop)
	l.done.Wait()
	t.Logf("load: %d Shoot CREATEs (%d/s), %d failed", l.calls.Load(), loadRate, l.failed.Load())
	if l.calls.Load() == 0 {
		t.Error("the load sent no Shoot")
	}
	if n := l.failed.Load(); n > 0 {
		t.Errorf("%d of %d Shoot CREATEs failed during the renewal; first: %v", n, l.calls.Load(), l.errs)
	}
}
