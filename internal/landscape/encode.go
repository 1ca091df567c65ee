package landscape

import (
	"fmt"
	"io"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// Encode writes objs as a landscape file that Decode reads back into equal
// objects: a YAML List (apiVersion v1, kind List) with apiVersion and kind
// set on every item, in the order given. Objects are not changed. Only the
// kinds Decode supports are accepted; another is an error naming its type.
func Encode(w io.Writer, objs []client.Object) error {
	items := make([]client.Object, 0, len(objs))
	for i, o := range objs {
		c, ok := o.DeepCopyObject().(client.Object)
		if !ok {
			return fmt.Errorf("item %d: %T is not an object", i, o)
		}
		if err := setTypeMeta(c); err != nil {
			return fmt.Errorf("item %d: %w", i, err)
		}
		items = append(items, c)
	}
	data, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

// setTypeMeta sets obj's apiVersion and kind from its Go type, as decodable
// maps them (typed objects from a client come without them).
func setTypeMeta(obj client.Object) error {
	t := reflect.TypeOf(obj)
	for key, newObj := range decodable {
		if reflect.TypeOf(newObj()) != t {
			continue
		}
		i := strings.LastIndex(key, "/")
		obj.GetObjectKind().SetGroupVersionKind(schema.FromAPIVersionAndKind(key[:i], key[i+1:]))
		return nil
	}
	return fmt.Errorf("%T is not a landscape kind", obj)
}
