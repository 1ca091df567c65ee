package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
)

// Tests run one at a time (file by file in name order, then in source order)
// and each leaves the landscape as it found it: Shoots it created are
// deleted, Seeds restored, and the webhook's cache is awaited to agree with
// the API server before the next.

var dryRunAll = client.DryRunAll

func keyOf(namespace, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: namespace, Name: name}
}

// poll calls f every interval until it returns nil or timeout passes; the
// error then names f's last error.
func poll(ctx context.Context, timeout, interval time.Duration, f func() error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		err := f()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not within %s: %w", timeout, err)
		case <-time.After(interval):
		}
	}
}

// eventuallyInterval is how often eventually calls its check.
const eventuallyInterval = 50 * time.Millisecond

// eventually fails t unless f returns nil within timeout.
func eventually(t *testing.T, timeout time.Duration, f func() error, msgAndArgs ...any) {
	t.Helper()
	require.NoError(t, poll(context.Background(), timeout, eventuallyInterval, f), msgAndArgs...)
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// labelValue makes a test name a label value.
func labelValue(test string) string {
	b := []byte(test)
	for i, c := range b {
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '-' && c != '.' {
			b[i] = '_'
		}
	}
	if len(b) > 63 {
		b = b[:63]
	}
	return strings.Trim(string(b), "_-.")
}

// startTest is the start of a test that creates Shoots: it needs the named
// webhooks registered, logs the webhook's output if the test fails, deletes
// the test's Shoots when it ends, and waits until earlier tests' Shoots are
// settled.
func (st *suite) startTest(t *testing.T, webhooks ...string) {
	t.Helper()
	st.requireWebhook(t, webhooks...)
	st.logOnFailure(t)
	st.cleanupShoots(t)
	st.waitSettled(t)
}

// requireWebhook fails t when webhook name is not registered: every webhook
// is implemented, so a path the server does not serve is a regression.
func (st *suite) requireWebhook(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, ok := st.registered[n]; !ok {
			t.Fatalf("webhook %s is not registered: the server answers 404 on %s", n, st.skipped[n])
		}
	}
}

// requireDenied checks that err is an admission denial by one of the
// webhooks, or by the ShootValidator emulation when shootValidatorPolicyName
// is among them (it runs before the validating webhooks, as ShootValidator
// does in gardener-apiserver, so it answers first where both refuse); on the
// gardener target that name stands for gardener-apiserver's own refusal.
func requireDenied(t *testing.T, err error, webhooks ...string) {
	t.Helper()
	require.Error(t, err, "want a denial by %v", webhooks)
	msg := err.Error()
	for _, w := range webhooks {
		if w == shootValidatorPolicyName && (isPolicyDenial(err) || isGardenerRefusal(err)) {
			return
		}
		if strings.Contains(msg, fmt.Sprintf("admission webhook %q denied the request", w)) {
			return
		}
	}
	t.Fatalf("want a denial by one of %v, got: %v", webhooks, err)
}

// cleanupShoots deletes the Shoots t creates when it ends, and waits until the
// webhook's usage reflects that.
func (st *suite) cleanupShoots(t *testing.T) {
	t.Helper()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := st.deleteTestShoots(ctx, t.Name()); err != nil {
			t.Errorf("deleting the test's Shoots: %v", err)
			return
		}
		st.waitSettled(t)
	})
}

// deleteTestShoots deletes the Shoots labelled with test, in every
// namespace. gardener-apiserver wants each confirmed by annotation and
// checks a collection delete against every Shoot of the namespace, so there
// they go one by one.
func (st *suite) deleteTestShoots(ctx context.Context, test string) error {
	sel := client.MatchingLabels{testLabel: labelValue(test)}
	if !onGardener() {
		return st.c.DeleteAllOf(ctx, &api.Shoot{}, client.InNamespace(projectNamespace), sel)
	}
	var list api.ShootList
	if err := st.c.List(ctx, &list, sel); err != nil {
		return err
	}
	for i := range list.Items {
		if err := st.deleteShoot(ctx, &list.Items[i]); err != nil {
			return err
		}
	}
	return nil
}

// deleteShoot deletes a Shoot; on the gardener target after confirming the
// deletion (annotation confirmation.gardener.cloud/deletion).
func (st *suite) deleteShoot(ctx context.Context, sh client.Object) error {
	if onGardener() {
		patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"confirmation.gardener.cloud/deletion":"true"}}}`))
		if err := st.c.Patch(ctx, sh, patch); err != nil {
			return client.IgnoreNotFound(err)
		}
	}
	return client.IgnoreNotFound(st.c.Delete(ctx, sh))
}

// warnings collects the warnings of the API server's responses.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) HandleWarningHeaderWithContext(_ context.Context, _ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, text)
}

// take returns the warnings so far and forgets them.
func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.msgs
	w.msgs = nil
	return out
}

// clientAs returns a client acting as user (impersonation; "" is the admin),
// and the warnings its responses carry.
func (st *suite) clientAs(t *testing.T, user string, groups ...string) (client.Client, *warnings) {
	t.Helper()
	cfg := rest.CopyConfig(st.admin)
	if user != "" {
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: append([]string{"system:authenticated"}, groups...)}
	}
	w := &warnings{}
	cfg.WarningHandler = nil
	cfg.WarningHandlerWithContext = w
	c, err := client.New(cfg, client.Options{Scheme: st.scheme})
	require.NoError(t, err)
	return c, w
}

// createManifests creates every object of a YAML (or JSON) file of the
// repository, in order, and reports how many.
func (st *suite) createManifests(ctx context.Context, rel string) (int, error) {
	data, err := os.ReadFile(filepath.Join(st.root, rel))
	if err != nil {
		return 0, err
	}
	n := 0
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			return n, nil
		} else if err != nil {
			return n, fmt.Errorf("%s: %w", rel, err)
		}
		if len(u.Object) == 0 {
			continue
		}
		if err := st.c.Create(ctx, u); err != nil {
			return n, fmt.Errorf("%s: %s %s: %w", rel, u.GetKind(), u.GetName(), err)
		}
		n++
	}
}

func ptrTo[T any](v T) *T { return &v }

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
