package landscape

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
	"github.com/seedwarden/seedwarden/internal/operationsapi"
	"github.com/seedwarden/seedwarden/internal/seedmanagement"
)

// decodable maps "apiVersion/kind" to a constructor of the typed object.
var decodable = map[string]func() client.Object{
	"core.gardener.cloud/v1beta1/Seed":                   func() client.Object { return &api.Seed{} },
	"core.gardener.cloud/v1beta1/Shoot":                  func() client.Object { return &api.Shoot{} },
	"core.gardener.cloud/v1beta1/CloudProfile":           func() client.Object { return &api.CloudProfile{} },
	"core.gardener.cloud/v1beta1/NamespacedCloudProfile": func() client.Object { return &api.NamespacedCloudProfile{} },
	"core.gardener.cloud/v1beta1/Project":                func() client.Object { return &api.Project{} },
	"v1/ConfigMap":                                       func() client.Object { return &corev1.ConfigMap{} },
	KindManagedSeedSet:                                   func() client.Object { return &seedmanagement.ManagedSeedSet{} },
	KindSeedAutoscaler:                                   func() client.Object { return &autoscalingapi.SeedAutoscaler{} },
	KindSeedDrain:                                        func() client.Object { return &operationsapi.SeedDrain{} },
}

// The kinds of `webhook plan --autoscale`'s file, as ReadKinds takes them.
const (
	KindManagedSeedSet = "seedmanagement.gardener.cloud/v1alpha1/ManagedSeedSet"
	KindSeedAutoscaler = "autoscaling.seedwarden.io/v1alpha1/SeedAutoscaler"
	// KindSeedDrain is read from landscapes too: a SeedDrain in one
	// cordons its seed, as it does in a cluster.
	KindSeedDrain = "operations.seedwarden.io/v1alpha1/SeedDrain"
)

// strict are the kinds of seedwarden's own API: their Go types are the
// whole API, so an unknown or repeated field is a mistake (a misspelt
// minReplicas would silently mean the default), not a field of a newer
// Gardener that this subset leaves out.
var strict = map[string]bool{KindSeedAutoscaler: true, KindSeedDrain: true}

// Decode reads a static landscape: JSON or YAML holding a single
// object, a List (kind List or <Kind>List, with items), a JSON array of
// objects, or several YAML documents separated by `---` (or concatenated JSON
// objects). Items are numbered from 0 in the order they appear, Lists
// flattened. Supported kinds are decoded into their typed structs; other kinds
// are skipped. An item without apiVersion/kind, or that does not decode, is an
// error naming its number, kind, name and the offending field.
func Decode(data []byte) ([]client.Object, error) {
	return decodeKinds(data, nil)
}

// decodeKinds is Decode; only, when set, are the kinds allowed.
func decodeKinds(data []byte, only map[string]bool) ([]client.Object, error) {
	docs, err := splitDocuments(data)
	if err != nil {
		return nil, err
	}
	d := decoder{only: only}
	for _, doc := range docs {
		if err := d.add(doc, 0); err != nil {
			return nil, err
		}
	}
	return d.out, nil
}

// ErrEmpty is ReadFile's error for a file without any object it decodes: a
// landscape with nothing in it is a wrong path or a failed dump, never what
// someone means to serve or plan on.
var ErrEmpty = errors.New("empty: no Seed, Shoot, CloudProfile, NamespacedCloudProfile, Project or ConfigMap in it")

// ReadFile reads and decodes the landscape file at path; a decoding error,
// or a file without a single supported object (ErrEmpty), names the file.
func ReadFile(path string) ([]client.Object, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	objs, err := Decode(data)
	if err == nil && len(objs) == 0 {
		err = ErrEmpty
	}
	if err != nil {
		return nil, fmt.Errorf("landscape %s: %w", path, err)
	}
	return objs, nil
}

// splitDocuments returns each top-level document as JSON. JSON input is not
// run through the YAML parser, which is much slower on large `-o json` dumps.
func splitDocuments(data []byte) ([]json.RawMessage, error) {
	trimmed := bytes.TrimLeft(data, " \t\r\n\ufeff")
	if len(trimmed) == 0 {
		return nil, nil
	}
	var docs []json.RawMessage
	if trimmed[0] == '{' || trimmed[0] == '[' {
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		for {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err == io.EOF {
				return docs, nil
			} else if err != nil {
				return nil, fmt.Errorf("document %d: invalid JSON: %w", len(docs), err)
			}
			docs = append(docs, raw)
		}
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for n := 0; ; n++ {
		doc, err := r.Read()
		if err == io.EOF {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", n, err)
		}
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, fmt.Errorf("document %d: invalid YAML: %w", n, err)
		}
		if t := bytes.TrimSpace(j); len(t) == 0 || string(t) == "null" {
			continue // empty document, e.g. a trailing `---` or only comments
		}
		docs = append(docs, j)
	}
}

type decoder struct {
	out  []client.Object
	next int // number of the next item
	// only, when set, are the kinds allowed: another is an error rather
	// than skipped.
	only map[string]bool
}

// maxListDepth bounds Lists nested in Lists (which kubectl never writes).
const maxListDepth = 8

func (d *decoder) add(raw json.RawMessage, depth int) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '[' {
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return fmt.Errorf("item %d: %w", d.next, err)
		}
		return d.addItems(items, depth)
	}
	h, err := readHeader(raw)
	if err != nil {
		d.next++
		return fmt.Errorf("item %d: %w", d.next-1, err)
	}
	if h.isList() {
		var items []json.RawMessage
		if err := json.Unmarshal(h.items, &items); err != nil {
			return fmt.Errorf("%s: items: %w", h.item(d.next), err)
		}
		return d.addItems(items, depth)
	}
	idx := d.next
	d.next++
	if h.apiVersion == "" || h.kind == "" {
		return fmt.Errorf("%s: apiVersion and kind are required", h.item(idx))
	}
	key := h.apiVersion + "/" + h.kind
	if d.only != nil && !d.only[key] {
		return fmt.Errorf("%s: %s %s is not %s", h.item(idx), h.apiVersion, h.kind, kindList(d.only, "or"))
	}
	newObj, ok := decodable[key]
	if !ok {
		return nil // not part of a landscape
	}
	obj := newObj()
	if err := decodeInto(raw, obj, strict[key]); err != nil {
		return fmt.Errorf("%s: %w", h.item(idx), err)
	}
	if check := checks[key]; check != nil {
		if err := check(obj); err != nil {
			return fmt.Errorf("%s: %w", h.item(idx), err)
		}
	}
	d.out = append(d.out, obj)
	return nil
}

// decodeInto decodes raw into obj; an error names the field that does not
// decode, or (strict) the unknown or repeated field.
func decodeInto(raw json.RawMessage, obj client.Object, strict bool) error {
	var strictErrs []error
	var err error
	if strict {
		strictErrs, err = kjson.UnmarshalStrict(raw, obj, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	} else {
		err = kjson.UnmarshalCaseSensitivePreserveInts(raw, obj)
	}
	if err != nil {
		path, ferr := locate(reflect.TypeOf(obj).Elem(), raw)
		if ferr == nil {
			ferr = err
		}
		if path != "" {
			return fmt.Errorf("%s: %w", path, ferr)
		}
		return ferr
	}
	return errors.Join(strictErrs...)
}

func (d *decoder) addItems(items []json.RawMessage, depth int) error {
	if depth >= maxListDepth {
		return fmt.Errorf("item %d: lists nested deeper than %d", d.next, maxListDepth)
	}
	for _, it := range items {
		if err := d.add(it, depth+1); err != nil {
			return err
		}
	}
	return nil
}

type header struct {
	apiVersion, kind, name, namespace string
	items                             json.RawMessage
	hasItems                          bool
}

// readHeader reads what identifies an item, tolerating a malformed metadata
// so the error about it can still name the kind.
func readHeader(raw json.RawMessage) (header, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return header{}, errors.New("not an object")
	}
	var h header
	for key, dst := range map[string]*string{"apiVersion": &h.apiVersion, "kind": &h.kind} {
		if v, ok := m[key]; ok && string(v) != "null" {
			if err := json.Unmarshal(v, dst); err != nil {
				return header{}, fmt.Errorf("%s: must be a string", key)
			}
		}
	}
	var meta struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	}
	_ = json.Unmarshal(m["metadata"], &meta) // best effort: only for messages
	h.name, h.namespace = meta.Name, meta.Namespace
	h.items, h.hasItems = m["items"]
	return h, nil
}

func (h header) isList() bool {
	return h.kind == "List" || (h.hasItems && strings.HasSuffix(h.kind, "List"))
}

// item names an item in errors: `item 3 (Seed "seed-a")`, `item 3 (List)`,
// `item 3 ("b")` without a kind, `item 3` with nothing to go by.
func (h header) item(idx int) string {
	name := h.name
	if h.namespace != "" && name != "" {
		name = h.namespace + "/" + name
	}
	switch {
	case h.kind != "" && name != "":
		return fmt.Sprintf("item %d (%s %q)", idx, h.kind, name)
	case h.kind != "":
		return fmt.Sprintf("item %d (%s)", idx, h.kind)
	case name != "":
		return fmt.Sprintf("item %d (%q)", idx, name)
	default:
		return fmt.Sprintf("item %d", idx)
	}
}

// DecodeShoot decodes exactly one core.gardener.cloud/v1beta1 Shoot (JSON
// or YAML), as Decode reads it.
func DecodeShoot(data []byte) (*api.Shoot, error) {
	objs, err := Decode(data)
	if err != nil {
		return nil, err
	}
	if len(objs) != 1 {
		return nil, fmt.Errorf("want exactly one core.gardener.cloud/v1beta1 Shoot, found %d supported objects", len(objs))
	}
	shoot, ok := objs[0].(*api.Shoot)
	if !ok {
		return nil, fmt.Errorf("want a core.gardener.cloud/v1beta1 Shoot, found %s %q", objs[0].GetObjectKind().GroupVersionKind().Kind, objs[0].GetName())
	}
	return shoot, nil
}
