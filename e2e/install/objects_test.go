package install

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// fieldOwner is the field manager of everything the tests apply.
const fieldOwner = "install-e2e"

// readObjects reads every object of a multi-document YAML file.
func readObjects(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	must(t, err)
	return decodeObjects(t, data)
}

func decodeObjects(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return out
		}
		must(t, err)
		if len(m) > 0 {
			out = append(out, &unstructured.Unstructured{Object: m})
		}
	}
}

// readDir reads the objects of every *.yaml file in dir.
func readDir(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	must(t, err)
	var out []*unstructured.Unstructured
	for _, f := range files {
		out = append(out, readObjects(t, f)...)
	}
	return out
}

// apply server-side applies objs in order, waiting for a new kind to reach
// the client's RESTMapper.
func apply(ctx context.Context, c client.Client, objs []*unstructured.Unstructured) error {
	for _, o := range objs {
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			err := c.Patch(ctx, o.DeepCopy(), client.Apply, client.FieldOwner(fieldOwner), client.ForceOwnership) //nolint:staticcheck // unstructured objects have no apply configuration
			if meta.IsNoMatchError(err) {
				return false, nil
			}
			return true, err
		})
		if err != nil {
			return fmt.Errorf("applying %s %s/%s: %w", o.GetKind(), o.GetNamespace(), o.GetName(), err)
		}
	}
	return nil
}

// selectObjects are the objects keep says yes to.
func selectObjects(objs []*unstructured.Unstructured, keep func(*unstructured.Unstructured) bool) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if keep(o) {
			out = append(out, o)
		}
	}
	return out
}

// ofKind keeps the objects of kind.
func ofKind(kind string) func(*unstructured.Unstructured) bool {
	return func(o *unstructured.Unstructured) bool { return o.GetKind() == kind }
}

// webhookConfigurationLabel is the selector docs/install.md applies
// everything but the webhook configurations with.
const webhookConfigurationLabel = "app.kubernetes.io/component"

// isWebhookConfiguration says whether o is one of the webhook configurations
// docs/install.md applies last (by its label, as `kubectl apply -l` does).
func isWebhookConfiguration(o *unstructured.Unstructured) bool {
	return o.GetLabels()[webhookConfigurationLabel] == "webhook-configuration"
}

// get reads the object of kind (group/version of apiVersion) namespace/name.
func get(ctx context.Context, c client.Client, apiVersion, kind, namespace, name string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, u)
	return u, err
}

// eventually polls check every interval until it returns nil or timeout
// passes; then t fails with what check said last.
func eventually(t *testing.T, timeout, interval time.Duration, check func() error, what string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s: %v", what, timeout, err)
		}
		time.Sleep(interval)
	}
}

// condition is the status of condition typ of o ("" when it has none), and
// its message.
func condition(o *unstructured.Unstructured, typ string) (string, string) {
	conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			status, _ := m["status"].(string)
			msg, _ := m["message"].(string)
			return status, msg
		}
	}
	return "", ""
}

// ignoreNotFound is err unless the object was not found.
func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
