package landscape

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	kjson "sigs.k8s.io/json"

	"github.com/seedwarden/seedwarden/internal/config"
)

// How strictly manifests are read. The structs of internal/api are a small
// subset of Gardener's types, and landscape files are mostly real dumps
// (`kubectl get -o yaml`) full of fields the subset leaves out, so an
// unknown field is no mistake in itself. A typo is what is near a field
// the subset knows at that level: within the configuration's suggestion
// distance (config.SuggestField: letter case, a few edits), while the
// field it resembles is not set beside it. No field of Gardener's
// core.gardener.cloud/v1beta1 Seed, Shoot, CloudProfile,
// NamespacedCloudProfile or Project that the subset leaves out is near one
// it keeps (checked against Gardener's types; TestRealDumpHasNoNearMisses
// keeps a dump of them quiet). Such a near miss is a warning in a
// landscape file and an error in a file written by hand (--add-seed,
// --like, --shoot, inline Headroom Shoots): the answer would change, as
// `alocatable` makes a Seed unlimited.

// problem is a field to report: its path in the object and what is wrong.
type problem struct {
	path, msg string
	refuse    bool // an error whoever wrote the file
}

// decodeError is a field that does not decode: its path in the object
// ("" when not found), and why.
type decodeError struct {
	path string
	err  error
}

func (e *decodeError) Error() string {
	if e.path == "" {
		return e.err.Error()
	}
	return e.path + ": " + e.err.Error()
}

// decodeInto decodes raw into obj. A field that does not decode is an
// error; unknown fields come back as problems: all of them (refused) for a
// strict kind, near misses for the others.
func decodeInto(raw json.RawMessage, obj any, strictKind bool) ([]problem, *decodeError) {
	opts := []kjson.StrictOption{kjson.DisallowUnknownFields}
	if strictKind {
		opts = append(opts, kjson.DisallowDuplicateFields)
	}
	strictErrs, err := kjson.UnmarshalStrict(raw, obj, opts...)
	t := reflect.TypeOf(obj).Elem()
	if err != nil {
		path, ferr := locate(t, raw)
		if ferr == nil {
			ferr = err
		}
		return nil, &decodeError{path, ferr}
	}
	var out []problem
	var fields map[string]any // raw as a tree, read once there is a near miss
	for _, se := range strictErrs {
		var fe kjson.FieldError
		if !errors.As(se, &fe) {
			out = append(out, problem{msg: se.Error(), refuse: true})
			continue
		}
		path := fe.FieldPath()
		kind, _, _ := strings.Cut(se.Error(), ` "`) // "unknown field" or "duplicate field"
		suggestion := ""
		if kind == unknownField {
			suggestion = config.SuggestField(t, path)
		}
		switch {
		case strictKind && suggestion != "":
			out = append(out, problem{path, fmt.Sprintf("%s; did you mean %q?", kind, suggestion), true})
		case strictKind:
			out = append(out, problem{path, kind, true})
		case suggestion != "":
			if fields == nil {
				_ = json.Unmarshal(raw, &fields) // it decoded into obj: an object
			}
			if isSet(fields, path, suggestion) {
				continue
			}
			out = append(out, problem{path, fmt.Sprintf("%s; did you mean %q?", kind, suggestion), false})
		}
	}
	return out, nil
}

// unknownField is how sigs.k8s.io/json's strict errors begin for a field
// the type does not have.
const unknownField = "unknown field"

// report warns of or refuses each problem of an item at path in doc.
func (d *decoder) report(doc *document, path, item string, problems []problem) error {
	var errs []error
	for _, p := range problems {
		msg := fmt.Sprintf("%s%s: %s: %s", at(doc, joinPath(path, p.path)), item, p.path, p.msg)
		switch {
		case p.refuse || d.handWritten:
			errs = append(errs, errors.New(msg))
		case d.warn != nil:
			d.warn(msg)
		}
	}
	return errors.Join(errs...)
}

// isSet reports whether the object at path's parent (in the tree of the
// whole item) sets name: then the unknown member is another field beside
// it, not a misspelling of it.
func isSet(tree map[string]any, path, name string) bool {
	segs := pathSegments(path)
	var node any = tree
	for _, seg := range segs[:len(segs)-1] {
		switch n := node.(type) {
		case map[string]any:
			node = n[seg]
		case []any:
			var i int
			if _, err := fmt.Sscanf(seg, "[%d]", &i); err != nil || i < 0 || i >= len(n) {
				return false
			}
			node = n[i]
		default:
			return false
		}
	}
	m, ok := node.(map[string]any)
	if !ok {
		return false
	}
	_, set := m[name]
	return set
}

// otherVersion is the apiVersion a kind read here has, when apiVersion is
// another version of the same group ("" otherwise: another API, not read).
func otherVersion(apiVersion, kind string) string {
	group, _, ok := strings.Cut(apiVersion, "/")
	if !ok {
		return ""
	}
	for k := range decodable {
		i := strings.LastIndex(k, "/")
		if k[i+1:] == kind && strings.HasPrefix(k, group+"/") {
			return k[:i]
		}
	}
	return ""
}
