// Package certwatch reports the state of the webhook's serving certificate as
// cert-manager sees it: it watches one cert-manager Certificate, exports
// seedwarden_certificate_expiry_timestamp_seconds and
// seedwarden_certificate_ready, and logs when the Certificate stops (or
// starts again) being ready and when it is about to expire.
//
// What it adds to cert-manager's own series, and what it does not. The two
// gauges are the same facts of the same object as cert-manager's controller
// exports (certmanager_certificate_expiration_timestamp_seconds and
// certmanager_certificate_ready_status): e2e/install's TestPrometheus, with
// cert-manager's controller v1.21.2 and Prometheus scraping both, holds them
// equal for the serving Certificate (the same notAfter to the second, both
// ready), and after a renewal all of them and the served certificate showed
// the new notAfter within 0.5-2.5s, about one 2s scrape (two runs; the
// test's played kubelet syncs volumes every 250ms, a real one within a
// minute or so). They are kept (issue 37) for the
// shipped alerts: with them, every seedwarden alert needs only seedwarden's
// own scrape, which SeedwardenDown watches, whereas cert-manager's series
// come from a second scrape (its controller's metrics port; cert-manager's
// chart creates no ServiceMonitor unless asked) whose absence no rule could
// tell from a healthy certificate. And each replica logs the Certificate's
// transitions beside its own errors, and reports 0 when it cannot read the
// Certificate. The cost: one list and watch of one object per replica.
// What a replica really serves is not the Certificate's status: the
// readiness probe reports that (server.SelfProbe,
// seedwarden_webhook_serving_certificate_expiry_timestamp_seconds).
//
// This watcher only reports. Reloading a rotated certificate is done by
// controller-runtime's certwatcher inside the webhook server, which rereads
// the certificate and key files (the mounted Secret) when they change; nothing
// here touches the serving certificate.
//
// Wiring, once the manager exists (the gauges are internal/metrics'):
//
//	m := metrics.New(ctrlmetrics.Registry, metrics.GroupCertificates)
//	err := certwatch.New(namespace, name, certwatch.Options{
//		Metrics: m,
//		Log:     log.WithName("certwatch"),
//	}).SetupWithManager(mgr)
//
// The watcher keeps its own cache, holding only that Certificate: it lists and
// watches certificates.cert-manager.io in that one namespace with the field
// selector metadata.name=NAME, so RBAC needs only a Role in that namespace
// granting get, list and watch on certificates (resourceNames may name the
// one Certificate). The manager's scheme and cache are left alone: the
// manager does not need cert-manager's CRD to start.
//
// The watcher never stops the manager: without the Certificate CRD, without
// RBAC, or without the Certificate itself it reports not ready, logs why and
// keeps trying. It runs on every replica (NeedLeaderElection is false), since
// each replica serves with the certificate and exports its own metrics.
package certwatch

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Defaults of Options.
const (
	DefaultRetryInterval = 30 * time.Second
	DefaultSyncTimeout   = time.Minute
)

// AddToScheme registers cert-manager's v1 types (Certificate, Issuer, ...) on s.
func AddToScheme(s *runtime.Scheme) error {
	return cmv1.AddToScheme(s)
}

// Options tune a Watcher. The zero value is usable.
type Options struct {
	// ExpiryWarning: a warning is logged once per certificate (notAfter) when
	// status.notAfter is this close; 0 or negative: never. The configuration
	// owns the default (certificate.expiryWarning).
	ExpiryWarning time.Duration
	// Metrics records the Certificate's state (the gauges
	// seedwarden_certificate_ready and
	// seedwarden_certificate_expiry_timestamp_seconds); nil records nothing.
	Metrics Recorder
	// Log receives the watcher's lines; the zero value discards them.
	Log logr.Logger
	// Reader is where Reconcile reads the Certificate. SetupWithManager sets
	// it to the watcher's own cache when nil.
	Reader client.Reader
	// RetryInterval is how long to wait before trying again to watch
	// Certificates (say the CRD is not installed yet) or to read one after an
	// error; 0 means DefaultRetryInterval.
	RetryInterval time.Duration
	// SyncTimeout: when the informer has not synced after this long (RBAC
	// forbids listing, say) the Certificate is reported not ready and the
	// reason logged, and the watcher keeps waiting; 0 means
	// DefaultSyncTimeout.
	SyncTimeout time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Watcher watches one Certificate and reports its state. It is a
// manager.Runnable that needs no leader election, and a reconcile.Reconciler.
type Watcher struct {
	key     types.NamespacedName
	opts    Options
	log     logr.Logger
	metrics recorder
	reader  client.Reader
	cache   crcache.Cache // the watcher's own: only this Certificate

	mu sync.Mutex
	st state
}

// state is what the last reconcile saw, to log transitions rather than every
// status update.
type state struct {
	observed    bool // a reconcile or a failure to watch has been reported
	found       bool
	ready       bool
	reason      string
	message     string
	unavailable string    // last reason the Certificate could not be watched
	warned      time.Time // the notAfter the expiry warning was logged for
	expired     time.Time // the notAfter the expiry was logged for
}

var (
	_ manager.Runnable               = (*Watcher)(nil)
	_ manager.LeaderElectionRunnable = (*Watcher)(nil)
	_ reconcile.Reconciler           = (*Watcher)(nil)
)

// New returns a Watcher for the Certificate namespace/name, recording its
// state through opts.Metrics. Reconcile works at once (given
// opts.Reader); SetupWithManager makes it watch.
func New(namespace, name string, opts Options) *Watcher {
	if opts.RetryInterval <= 0 {
		opts.RetryInterval = DefaultRetryInterval
	}
	if opts.SyncTimeout <= 0 {
		opts.SyncTimeout = DefaultSyncTimeout
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	key := types.NamespacedName{Namespace: namespace, Name: name}
	return &Watcher{
		key:     key,
		opts:    opts,
		log:     opts.Log.WithValues("certificate", key.String()),
		metrics: recorder{opts.Metrics},
		reader:  opts.Reader,
	}
}

// SetupWithManager adds the watcher to mgr. It makes the watcher's own cache
// from mgr's REST config, HTTP client and REST mapper, restricted to the one
// Certificate, with a scheme holding only cert-manager's types; nothing
// needs the Certificate CRD before the watcher starts.
func (w *Watcher) SetupWithManager(mgr ctrl.Manager) error {
	if w.key.Namespace == "" || w.key.Name == "" {
		// An empty namespace would make the cache cluster-wide.
		return fmt.Errorf("certwatch: the Certificate needs a namespace and a name (got %q)", w.key.String())
	}
	scheme := runtime.NewScheme()
	if err := AddToScheme(scheme); err != nil {
		return err
	}
	c, err := crcache.New(mgr.GetConfig(), crcache.Options{
		HTTPClient:           mgr.GetHTTPClient(),
		Scheme:               scheme,
		Mapper:               mgr.GetRESTMapper(),
		DefaultNamespaces:    map[string]crcache.Config{w.key.Namespace: {}},
		DefaultFieldSelector: fields.OneTermEqualSelector("metadata.name", w.key.Name),
		DefaultTransform:     crcache.TransformStripManagedFields(),
	})
	if err != nil {
		return fmt.Errorf("certwatch: cache for Certificate %s: %w", w.key, err)
	}
	w.cache = c
	if w.reader == nil {
		w.reader = c
	}
	return mgr.Add(w)
}

// NeedLeaderElection is false: every replica serves with the certificate and
// reports on it.
func (w *Watcher) NeedLeaderElection() bool { return false }

// Reconcile reads the Certificate and updates the gauges, logging what
// changed. The request is ignored: a Watcher watches one Certificate.
// RequeueAfter is when the expiry warning or the expiry falls due.
func (w *Watcher) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	if w.reader == nil {
		return reconcile.Result{}, errors.New("certwatch: no reader (use SetupWithManager or Options.Reader)")
	}
	var cert cmv1.Certificate
	err := w.reader.Get(ctx, w.key, &cert)
	switch {
	case apierrors.IsNotFound(err):
		w.observeMissing()
		return reconcile.Result{}, nil
	case err != nil:
		return reconcile.Result{}, fmt.Errorf("reading Certificate %s: %w", w.key, err)
	}
	return reconcile.Result{RequeueAfter: w.observe(&cert)}, nil
}

func (w *Watcher) observeMissing() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.metrics.setReady(w.key, false)
	w.metrics.setExpiry(w.key, nil)
	if !w.st.observed || w.st.found || w.st.unavailable != "" {
		w.log.Info("Certificate not found; reporting it as not ready")
	}
	w.st = state{observed: true}
}

// observe records cert and returns when to look again (0: only on a change).
func (w *Watcher) observe(cert *cmv1.Certificate) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	cond, ready, notAfter := w.setGauges(cert)
	w.logReadiness(cond, ready, notAfter)
	w.st.observed, w.st.found, w.st.ready, w.st.unavailable = true, true, ready, ""
	return w.watchExpiry(cert, notAfter, ready)
}

// setGauges sets the gauges from cert and returns what they show: its Ready
// condition (nil: none), whether it is ready, and its expiry (zero: unknown).
func (w *Watcher) setGauges(cert *cmv1.Certificate) (cond *cmv1.CertificateCondition, ready bool, notAfter time.Time) {
	cond = readyCondition(cert)
	ready = cond != nil && cond.Status == cmmeta.ConditionTrue
	if cert.Status.NotAfter != nil {
		notAfter = cert.Status.NotAfter.Time
		w.metrics.setExpiry(w.key, &notAfter)
	} else {
		w.metrics.setExpiry(w.key, nil)
	}
	w.metrics.setReady(w.key, ready)
	return cond, ready, notAfter
}

// logReadiness logs a change of readiness (or of the reason for not being
// ready) since the last observation, and records the reason. w.mu is held.
func (w *Watcher) logReadiness(cond *cmv1.CertificateCondition, ready bool, notAfter time.Time) {
	prev := w.st
	changed := !prev.observed || !prev.found || prev.unavailable != "" || prev.ready != ready
	if ready {
		if changed {
			kv := []any{}
			if !notAfter.IsZero() {
				kv = append(kv, "notAfter", notAfter.UTC().Format(time.RFC3339))
			}
			w.log.Info("Certificate is ready", kv...)
		}
		w.st.reason, w.st.message = "", ""
		return
	}
	reason, message, status := "", "the Certificate has no Ready condition yet", "absent"
	if cond != nil {
		reason, message, status = cond.Reason, cond.Message, string(cond.Status)
	}
	if changed || prev.reason != reason || prev.message != message {
		w.log.Info("Certificate is not ready", "status", status, "reason", reason, "message", message)
	}
	w.st.reason, w.st.message = reason, message
}

// watchExpiry logs, once per notAfter, that the Certificate expires soon or
// has expired, and returns when to look again (0: only on a change). w.mu
// is held.
func (w *Watcher) watchExpiry(cert *cmv1.Certificate, notAfter time.Time, ready bool) time.Duration {
	if notAfter.IsZero() || w.opts.ExpiryWarning <= 0 {
		return 0
	}
	left := notAfter.Sub(w.opts.Now())
	kv := []any{"notAfter", notAfter.UTC().Format(time.RFC3339), "ready", ready}
	if cert.Status.RenewalTime != nil {
		kv = append(kv, "renewalTime", cert.Status.RenewalTime.UTC().Format(time.RFC3339))
	}
	switch {
	case left <= 0:
		if !w.st.expired.Equal(notAfter) {
			// logr has no warning level; Error keeps the line visible at
			// log.level warn.
			w.log.Error(nil, "Certificate has expired", kv...)
			w.st.expired = notAfter
		}
		return 0
	case left <= w.opts.ExpiryWarning:
		if !w.st.warned.Equal(notAfter) {
			w.log.Error(nil, "Certificate expires soon", append(kv, "expiresIn", left.Round(time.Second).String(), "warningWindow", w.opts.ExpiryWarning.String())...)
			w.st.warned = notAfter
		}
		return left
	default:
		return left - w.opts.ExpiryWarning
	}
}

// readyCondition returns the Certificate's Ready condition, or nil.
func readyCondition(cert *cmv1.Certificate) *cmv1.CertificateCondition {
	for i := range cert.Status.Conditions {
		if cert.Status.Conditions[i].Type == cmv1.CertificateConditionReady {
			return &cert.Status.Conditions[i]
		}
	}
	return nil
}
