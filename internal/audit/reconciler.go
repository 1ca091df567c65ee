package audit

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// ControllerName is the leader-only work's name.
const ControllerName = "audit"

// writeTimeout bounds one audit's report writes.
const writeTimeout = time.Minute

// budgetFactor stretches the wait after an audit to this many times its
// duration when that is longer than the interval: the audit then costs at
// most 1/20 (5 %) of a core.
const budgetFactor = 20

// Reconciler runs the audit every Interval while its term lasts and writes
// the reports: a report only when what it says changed, and a report whose
// namespace has no violation left is deleted. It reads the Shoots and the
// landscape from the cache; its only API calls are one List of its own
// reports when a term starts and the writes.
type Reconciler struct {
	// Client writes the reports; Reader lists them at the start of a
	// term (the API server: the manager's cache does not hold them).
	Client client.Client
	Reader client.Reader
	// Snapshot is the landscape the webhooks decide from (cache.Store).
	Snapshot func() *placement.Snapshot
	// Shoots are the reduced Shoots of the watch cache.
	Shoots func() iter.Seq[*cache.ReducedShoot]
	// Ready reports whether the cache may be trusted (synced and fresh);
	// until then no audit runs. Nil: always.
	Ready    func() bool
	Interval time.Duration
	// Limit is audit.resultsLimit.
	Limit   int
	Metrics *metrics.Recorder
	Log     logr.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time

	// written are the reports as last written or read, by namespace.
	written map[string]*Report
	scanner Scanner
}

// Run audits every Interval until ctx ends (the term): first once the
// cache is ready, then each Interval (or 20 times the last audit's
// duration, if longer) after the previous audit ended.
func (r *Reconciler) Run(ctx context.Context) error {
	if r.Interval <= 0 || r.Limit <= 0 {
		return fmt.Errorf("interval %s and results limit %d must be positive", r.Interval, r.Limit)
	}
	defer r.Metrics.ForgetAudit()
	wait, adopted := time.Duration(0), false
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		wait = r.Interval
		if r.Ready != nil && !r.Ready() {
			wait = min(r.Interval, time.Second)
			continue
		}
		// An error here would end the term for all the leader-only work
		// (the retry controller too): a Report CRD not installed yet, or
		// RBAC missing, waits for the next interval instead.
		if !adopted {
			if err := r.adopt(ctx); err != nil {
				if ctx.Err() == nil {
					r.Log.Error(err, "Placement audit: cannot read its reports; no audit until it can", "retryIn", r.Interval)
				}
				continue
			}
			adopted = true
		}
		start := time.Now()
		if _, err := r.Audit(ctx); err != nil && ctx.Err() == nil {
			r.Log.Error(err, "Placement audit: some reports were not written; the next audit tries again")
		}
		wait = nextWait(r.Interval, time.Since(start))
	}
}

// adopt reads the reports an earlier term or replica wrote.
func (r *Reconciler) adopt(ctx context.Context) error {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(ReportGVK.GroupVersion().WithKind(ReportGVK.Kind + "List"))
	if err := r.Reader.List(ctx, list, client.MatchingLabels{LabelManagedBy: Source}); err != nil {
		return fmt.Errorf("listing the reports labelled %s=%s: %w", LabelManagedBy, Source, err)
	}
	r.written = map[string]*Report{}
	for i := range list.Items {
		u := &list.Items[i]
		if u.GetName() != ReportName {
			continue
		}
		rep := &Report{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, rep); err != nil {
			r.Log.Info("Placement audit: a report it does not read is replaced", "report", u.GetNamespace()+"/"+u.GetName(), "error", err.Error())
			rep = &Report{}
			rep.ObjectMeta = *metaOf(u)
		}
		r.written[u.GetNamespace()] = rep
	}
	return nil
}

// Audit scans once, writes the reports that changed and records the
// metrics; it returns the findings and the writes that failed.
func (r *Reconciler) Audit(ctx context.Context) (Findings, error) {
	now := r.now()
	start := now
	f := r.scanner.Scan(r.Snapshot(), r.Shoots())
	ctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	if r.written == nil {
		r.written = map[string]*Report{}
	}
	var errs []error
	byNS := ByNamespace(f.Results)
	for ns, results := range byNS {
		prev := r.written[ns]
		rep := NewReport(ns, results, r.Limit, prev, now)
		if prev != nil && Equal(prev, rep) {
			continue
		}
		if err := r.write(ctx, prev, rep); err != nil {
			errs = append(errs, fmt.Errorf("report %s/%s: %w", ns, ReportName, err))
		}
	}
	for ns, prev := range r.written {
		if _, ok := byNS[ns]; ok {
			continue
		}
		if err := r.delete(ctx, prev); err != nil {
			errs = append(errs, fmt.Errorf("report %s/%s: %w", ns, ReportName, err))
		}
	}
	end := r.now()
	r.Metrics.SetAudit(f.Violating(), end, end.Sub(start))
	return f, errors.Join(errs...)
}

// write creates or updates rep (prev: what is there, nil if nothing). A
// write that fails forgets the namespace's report: the next audit reads
// it again.
func (r *Reconciler) write(ctx context.Context, prev, rep *Report) error {
	u, err := toUnstructured(rep)
	if err != nil {
		return err
	}
	if prev == nil {
		err = r.Client.Create(ctx, u)
		if apierrors.IsAlreadyExists(err) {
			// Written by someone else meanwhile: update it.
			cur := &unstructured.Unstructured{}
			cur.SetGroupVersionKind(ReportGVK)
			if err = r.Reader.Get(ctx, client.ObjectKeyFromObject(u), cur); err == nil {
				u.SetResourceVersion(cur.GetResourceVersion())
				err = r.Client.Update(ctx, u)
			}
		}
	} else {
		u.SetResourceVersion(prev.ResourceVersion)
		err = r.Client.Update(ctx, u)
		if apierrors.IsNotFound(err) {
			u.SetResourceVersion("")
			err = r.Client.Create(ctx, u)
		}
	}
	if err != nil {
		delete(r.written, rep.Namespace)
		return err
	}
	rep.ResourceVersion = u.GetResourceVersion()
	r.written[rep.Namespace] = rep
	return nil
}

// delete removes a report whose namespace has no violation left.
func (r *Reconciler) delete(ctx context.Context, prev *Report) error {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(ReportGVK)
	u.SetNamespace(prev.Namespace)
	u.SetName(ReportName)
	err := r.Client.Delete(ctx, u, client.Preconditions{ResourceVersion: ptrTo(prev.ResourceVersion)})
	if apierrors.IsConflict(err) {
		// Changed by someone else: delete what is there now.
		err = r.Client.Delete(ctx, u)
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	delete(r.written, prev.Namespace)
	return nil
}

// nextWait is the time from an audit that took took to the next: the
// interval, or budgetFactor times took when longer (at most 5 % of a core
// whatever the landscape and the interval).
func nextWait(interval, took time.Duration) time.Duration {
	return max(interval, budgetFactor*took)
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func toUnstructured(rep *Report) (*unstructured.Unstructured, error) {
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(rep)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: obj}
	// Managed fields and the like are the API server's.
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	return u, nil
}

func metaOf(u *unstructured.Unstructured) *metav1.ObjectMeta {
	return &metav1.ObjectMeta{Namespace: u.GetNamespace(), Name: u.GetName(), ResourceVersion: u.GetResourceVersion()}
}

func ptrTo(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
