package landscape

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ReadKinds reads a file that holds objects of the given kinds only
// ("apiVersion/kind", keys of the decodable kinds such as
// KindSeedAutoscaler), in the forms Decode reads. Unlike a landscape,
// whose dumps carry kinds it does not need, such a file is written for
// its purpose: another kind is an error naming the item, and so is a file
// with no object at all. Errors name the file.
func ReadKinds(path string, kinds ...string) ([]client.Object, error) {
	only := map[string]bool{}
	for _, k := range kinds {
		if _, ok := decodable[k]; !ok {
			return nil, fmt.Errorf("%s: not a kind this package decodes", k)
		}
		only[k] = true
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	objs, err := decode(data, reading{only: only, handWritten: true})
	if err == nil && len(objs) == 0 {
		err = fmt.Errorf("empty: no %s in it", kindList(only, "or"))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return objs, nil
}

// kindList names the kinds in words, sorted: "a/v1 A or b/v1 B".
func kindList(kinds map[string]bool, conj string) string {
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		i := strings.LastIndex(k, "/")
		names = append(names, k[:i]+" "+k[i+1:])
	}
	slices.Sort(names)
	if len(names) <= 1 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " " + conj + " " + names[len(names)-1]
}
