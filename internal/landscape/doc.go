// Package landscape reads landscape files: the Seeds, CloudProfiles,
// NamespacedCloudProfiles, Projects, region-config ConfigMaps (and Shoots)
// of a garden as JSON or YAML, as `kubectl get -o yaml` writes them. Errors
// name the item, its kind and name, and the field that does not decode.
//
// Encode writes such a file; List reads the same objects from a cluster,
// once, through a client it is given (live explain and plan).
//
// `webhook serve --landscape` and `webhook simulate` load what it returns
// into a cache.Store; it does not know the Store.
package landscape
