package certwatch

import (
	"context"
	"errors"
	"fmt"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	toolscache "k8s.io/client-go/tools/cache"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// How the Watcher watches: its cache, the Certificate informer (retried
// while it cannot be had) and the loop that reconciles on every change and
// when the Certificate's expiry falls due.

// Start watches the Certificate until ctx ends, reconciling on every change
// and when the expiry warning or the expiry itself falls due. It returns nil
// when ctx ends: failures to watch are reported and retried, never returned,
// so that they do not stop the manager (and the webhook with it).
func (w *Watcher) Start(ctx context.Context) error {
	if w.cache == nil || w.reader == nil {
		return errors.New("certwatch: Start without a cache (use SetupWithManager)")
	}
	ctx, stopCache := w.runCache(ctx)
	defer stopCache()
	inf := w.informer(ctx)
	if inf == nil {
		return nil
	}
	trigger := make(chan struct{}, 1)
	reg, err := inf.AddEventHandler(w.notifier(trigger))
	if err != nil {
		// Only a stopped informer refuses handlers: the cache is shutting down.
		w.log.Info("Cannot watch the Certificate", "error", err.Error())
		return nil
	}
	defer func() { _ = inf.RemoveEventHandler(reg) }()
	if !w.waitForSync(ctx, inf) {
		return nil
	}
	w.reconcileLoop(ctx, trigger)
	return nil
}

// runCache runs the watcher's cache until the returned context ends; stop
// ends it and waits until it has stopped.
func (w *Watcher) runCache(ctx context.Context) (_ context.Context, stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	cacheDone := make(chan struct{})
	go func() {
		defer close(cacheDone)
		if err := w.cache.Start(ctx); err != nil {
			w.log.Error(err, "Certificate cache stopped")
		}
	}()
	return ctx, func() {
		cancel()
		<-cacheDone
	}
}

// notifier signals trigger (without blocking) on every event of our
// Certificate.
func (w *Watcher) notifier(trigger chan<- struct{}) toolscache.ResourceEventHandlerFuncs {
	notify := func(obj any) {
		if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		// The cache holds only our Certificate when ConfigureCache was
		// used; without it, skip the others here.
		if o, ok := obj.(client.Object); ok && (o.GetNamespace() != w.key.Namespace || o.GetName() != w.key.Name) {
			return
		}
		select {
		case trigger <- struct{}{}:
		default:
		}
	}
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    notify,
		UpdateFunc: func(_, obj any) { notify(obj) },
		DeleteFunc: notify,
	}
}

// reconcileLoop reconciles now, on every trigger and when the last
// reconcile asked to look again (or, after a failure, every RetryInterval),
// until ctx ends.
func (w *Watcher) reconcileLoop(ctx context.Context, trigger <-chan struct{}) {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		res, err := w.Reconcile(ctx, reconcile.Request{NamespacedName: w.key})
		if ctx.Err() != nil {
			return
		}
		next := res.RequeueAfter
		if err != nil {
			w.log.Error(err, "Reading the Certificate failed; retrying", "retryIn", w.opts.RetryInterval.String())
			next = w.opts.RetryInterval
		}
		if timer != nil {
			timer.Stop()
		}
		var fire <-chan time.Time
		if next > 0 {
			timer = time.NewTimer(next)
			fire = timer.C
		}
		select {
		case <-ctx.Done():
			return
		case <-trigger:
		case <-fire:
		}
	}
}

// informer returns the cache's Certificate informer, trying again every
// RetryInterval while the cache cannot make one (the CRD is not installed,
// say); nil when ctx ends first.
func (w *Watcher) informer(ctx context.Context) crcache.Informer {
	for {
		inf, err := w.cache.GetInformer(ctx, &cmv1.Certificate{}, crcache.BlockUntilSynced(false))
		if err == nil {
			return inf
		}
		if ctx.Err() != nil {
			return nil
		}
		w.reportUnavailable(fmt.Sprintf("cannot watch certificates.cert-manager.io (is cert-manager installed?): %v", err))
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(w.opts.RetryInterval):
		}
	}
}

// waitForSync waits until inf has synced, reporting the Certificate not ready
// once SyncTimeout has passed; false when ctx ends first.
func (w *Watcher) waitForSync(ctx context.Context, inf crcache.Informer) bool {
	synced := func(context.Context) (bool, error) { return inf.HasSynced(), nil }
	timeoutCtx, cancel := context.WithTimeout(ctx, w.opts.SyncTimeout)
	err := wait.PollUntilContextCancel(timeoutCtx, 50*time.Millisecond, true, synced)
	cancel()
	if err == nil {
		return true
	}
	if ctx.Err() != nil {
		return false
	}
	w.reportUnavailable(fmt.Sprintf("the Certificate informer has not synced after %s (may this pod get, list and watch certificates.cert-manager.io in namespace %s?)",
		w.opts.SyncTimeout, w.key.Namespace))
	return wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, synced) == nil
}

// reportUnavailable reports the Certificate not ready because it cannot be
// watched, logging each new reason once.
func (w *Watcher) reportUnavailable(reason string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.metrics.setReady(w.key, false)
	if w.st.unavailable != reason {
		w.log.Info("Certificate state unknown; reporting it as not ready", "reason", reason)
	}
	w.st.unavailable = reason
	w.st.observed = true
	w.st.ready = false
}
