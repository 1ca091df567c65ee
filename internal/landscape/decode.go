package landscape

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
// are skipped. An item without apiVersion/kind, that does not decode, of a
// kind read here but in another version of its group, or given twice, is an
// error naming its line in the file, number, kind, name and the offending
// field. Near misses (strict.go) are dropped: DecodeWarn reports them.
func Decode(data []byte) ([]client.Object, error) {
	return decode(data, reading{})
}

// DecodeWarn is Decode, reporting each near miss through warn.
func DecodeWarn(data []byte, warn func(string)) ([]client.Object, error) {
	return decode(data, reading{warn: warn})
}

// reading says how strictly a file is read.
type reading struct {
	// only, when set, are the kinds allowed: another is an error rather
	// than skipped.
	only map[string]bool
	// handWritten: a near miss is an error, not a warning; the file was
	// written for its purpose, not dumped from a garden.
	handWritten bool
	warn        func(string) // near misses when not handWritten; nil: dropped
}

func decode(data []byte, r reading) ([]client.Object, error) {
	docs, err := splitDocuments(data)
	if err != nil {
		return nil, err
	}
	d := decoder{reading: r, seen: map[string]position{}}
	for _, doc := range docs {
		if err := d.add(doc, doc.json, "", 0); err != nil {
			return nil, err
		}
	}
	return d.out, nil
}

// ErrEmpty is ReadFile's error for a file without any object it decodes: a
// landscape with nothing in it is a wrong path or a failed dump, never what
// someone means to serve or plan on.
var ErrEmpty = errors.New("empty: no Seed, Shoot, CloudProfile, NamespacedCloudProfile, Project or ConfigMap in it")

// ReadFile reads and decodes the landscape file at path, a dump of a
// garden: near misses go to warn (nil: nowhere), naming the file. A
// decoding error, or a file without a single supported object (ErrEmpty),
// names the file.
func ReadFile(path string, warn func(string)) ([]client.Object, error) {
	r := reading{}
	if warn != nil {
		r.warn = func(s string) { warn("landscape " + path + ": " + s) }
	}
	return readFile(path, r)
}

// ReadHandWritten is ReadFile for a file written by hand (plan
// --add-seed): a near miss is an error.
func ReadHandWritten(path string) ([]client.Object, error) {
	return readFile(path, reading{handWritten: true})
}

func readFile(path string, r reading) ([]client.Object, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	objs, err := decode(data, r)
	if err == nil && len(objs) == 0 {
		err = ErrEmpty
	}
	if err != nil {
		return nil, fmt.Errorf("landscape %s: %w", path, err)
	}
	return objs, nil
}

type decoder struct {
	reading
	out  []client.Object
	next int                 // number of the next item
	seen map[string]position // by apiVersion, kind, namespace and name
}

// position is where an item is: its number and line in the file.
type position struct{ item, line int }

func (p position) String() string {
	if p.line == 0 {
		return fmt.Sprintf("item %d", p.item)
	}
	return fmt.Sprintf("item %d at line %d", p.item, p.line)
}

// at is the "line N: " that begins a message about path in doc.
func at(doc *document, path string) string {
	if l := doc.lineOf(path); l > 0 {
		return fmt.Sprintf("line %d: ", l)
	}
	return ""
}

// maxListDepth bounds Lists nested in Lists (which kubectl never writes).
const maxListDepth = 8

// add decodes raw, found at path in doc.
func (d *decoder) add(doc *document, raw json.RawMessage, path string, depth int) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '[' {
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return fmt.Errorf("%sitem %d: %w", at(doc, path), d.next, err)
		}
		return d.addItems(doc, items, path, depth)
	}
	h, err := readHeader(raw)
	if err != nil {
		d.next++
		return fmt.Errorf("%sitem %d: %w", at(doc, path), d.next-1, err)
	}
	if h.isList() {
		var items []json.RawMessage
		if err := json.Unmarshal(h.items, &items); err != nil {
			return fmt.Errorf("%s%s: items: %w", at(doc, joinPath(path, "items")), h.item(d.next), err)
		}
		return d.addItems(doc, items, joinPath(path, "items"), depth)
	}
	idx := d.next
	d.next++
	item := h.item(idx)
	if h.apiVersion == "" || h.kind == "" {
		return fmt.Errorf("%s%s: apiVersion and kind are required", at(doc, path), item)
	}
	key := h.apiVersion + "/" + h.kind
	if d.only != nil && !d.only[key] {
		return fmt.Errorf("%s%s: %s %s is not %s", at(doc, path), item, h.apiVersion, h.kind, kindList(d.only, "or"))
	}
	newObj, ok := decodable[key]
	if !ok {
		if want := otherVersion(h.apiVersion, h.kind); want != "" {
			return fmt.Errorf("%s%s: apiVersion %s: a %s is read as %s only; converted, it would count (left out, so would whatever depends on it)",
				at(doc, joinPath(path, "apiVersion")), item, h.apiVersion, h.kind, want)
		}
		return nil // not part of a landscape
	}
	if h.name != "" {
		id := key + " " + h.namespace + "/" + h.name
		if first, dup := d.seen[id]; dup {
			return fmt.Errorf("%s%s: given twice, first as %s", at(doc, path), item, first)
		}
		d.seen[id] = position{idx, doc.lineOf(path)}
	}
	obj := newObj()
	misses, derr := decodeInto(raw, obj, strict[key])
	if derr != nil {
		return fmt.Errorf("%s%s: %w", at(doc, joinPath(path, derr.path)), item, derr)
	}
	if err := d.report(doc, path, item, misses); err != nil {
		return err
	}
	if check := checks[key]; check != nil {
		if err := check(obj); err != nil {
			return fmt.Errorf("%s%s: %w", at(doc, path), item, err)
		}
	}
	d.out = append(d.out, obj)
	return nil
}

func (d *decoder) addItems(doc *document, items []json.RawMessage, path string, depth int) error {
	if depth >= maxListDepth {
		return fmt.Errorf("%sitem %d: lists nested deeper than %d", at(doc, path), d.next, maxListDepth)
	}
	for i, it := range items {
		if err := d.add(doc, it, fmt.Sprintf("%s[%d]", path, i), depth+1); err != nil {
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
// or YAML) written by hand (--like, --shoot, a Headroom template): as
// Decode reads it, a near miss an error.
func DecodeShoot(data []byte) (*api.Shoot, error) {
	objs, err := decode(data, reading{handWritten: true})
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
