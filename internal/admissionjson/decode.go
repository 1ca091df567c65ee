// Package admissionjson reads the JSON of admission requests: the
// AdmissionReview of the mutating webhook (DecodeShootReview, and
// DecodeShootRequest for a review controller-runtime decoded), the objects
// the validating webhooks judge, and the review type every webhook checks.
// It also writes the AdmissionReview of an answer (WriteReview).
package admissionjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kjson "sigs.k8s.io/json"

	"github.com/seedwarden/seedwarden/internal/api"
)

// Decoding of the objects an AdmissionReview carries (object, oldObject, the
// binding body, Secrets, Namespaces), one function per kind, for every
// webhook: the one place that decides how request JSON becomes Go values.
// Every object is read as the API server reads it (unmarshal): keys match
// exactly, the last of duplicate keys wins. A new Shoot that also carries a
// key differing from a field's only in case is refused (casefold.go).

// unmarshal decodes request JSON as Kubernetes does (sigs.k8s.io/json):
// encoding/json would also match "SeedName" or "seedname" to seedName and so
// read another object than the API server stores. Integers stay integers.
func unmarshal(raw []byte, into any) error {
	return kjson.UnmarshalCaseSensitivePreserveInts(raw, into)
}

var errNoObject = errors.New("seedwarden: admission request carries no object")

// absent reports an object the request does not carry: none, or a literal
// null (which would decode into an empty object without error).
func absent(raw []byte) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

// DecodeShoot decodes the admitted object (request.object, or the body of a
// binding) for the validating webhooks, and refuses one with a case variant
// of a field they read. Only what they read is decoded (shootObject): the
// rest of metadata and the many Shoot fields api.Shoot does not model are
// skipped.
func DecodeShoot(raw []byte) (*api.Shoot, error) {
	obj, err := decodeShootObject(raw, true)
	if err == nil {
		err = obj.check()
	}
	if err != nil {
		return nil, err
	}
	return obj.toShoot(), nil
}

// DecodeOldShoot decodes request.oldObject as the API server does. Case
// variants are not refused here: the stored object is not the request's to
// change, and it is read exactly as stored.
func DecodeOldShoot(raw []byte) (*api.Shoot, error) {
	obj, err := decodeShootObject(raw, false)
	if err == nil {
		err = obj.check()
	}
	if err != nil {
		return nil, fmt.Errorf("old object: %w", err)
	}
	return obj.toShoot(), nil
}

// DecodeSpecMembers reads the spec of a Shoot object member by member (nil
// when absent), each member's JSON compacted and not decoded, a null member
// left out (it counts as absent), for comparing fields api.Shoot does not
// hold: the API server writes both objects of a request with one encoder,
// so a member it did not change has the same bytes in both, and decoding a
// member of any shape (megabytes of `{}`) would cost many times its size.
func DecodeSpecMembers(raw []byte) (map[string]json.RawMessage, error) {
	var o struct {
		Spec map[string]json.RawMessage `json:"spec"`
	}
	if err := unmarshal(raw, &o); err != nil {
		return nil, err
	}
	for k, v := range o.Spec {
		if isNull(v) {
			delete(o.Spec, k)
			continue
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, v); err != nil {
			return nil, err // unreachable: the decoder accepted it
		}
		o.Spec[k] = compact.Bytes()
	}
	return o.Spec, nil
}

// decodeMembers decodes a JSON object member by member, with exact keys and
// the last of duplicate keys winning, as a JSON patch sees the object
// (lastWinsShape).
func decodeMembers(raw []byte) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	err := unmarshal(raw, &m)
	return m, err
}

// DecodeSecret decodes what the kubeconfig Secret webhook reads of the
// admitted v1 Secret (request.object): its type and the key of data and
// stringData, the other keys skipped, not decoded (a Secret's metadata and
// other keys can be most of its bytes).
func DecodeSecret(raw []byte, key string) (*corev1.Secret, error) {
	if absent(raw) {
		return nil, errNoObject
	}
	var obj struct {
		metav1.TypeMeta `json:",inline"`
		Data            json.RawMessage `json:"data"`
		StringData      json.RawMessage `json:"stringData"`
	}
	if err := unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("seedwarden: cannot decode object as a Secret: %w", err)
	}
	if obj.Kind != "" && obj.Kind != "Secret" {
		return nil, fmt.Errorf("seedwarden: object has kind %q, expected %q", obj.Kind, "Secret")
	}
	if obj.APIVersion != "" && obj.APIVersion != "v1" {
		return nil, fmt.Errorf("seedwarden: object has apiVersion %q, expected %q", obj.APIVersion, "v1")
	}
	secret := &corev1.Secret{TypeMeta: obj.TypeMeta}
	var data []byte
	var stringData string
	for _, m := range []struct {
		name string
		raw  json.RawMessage
		into any
		set  func()
	}{
		{"data", obj.Data, &data, func() { secret.Data = map[string][]byte{key: data} }},
		{"stringData", obj.StringData, &stringData, func() { secret.StringData = map[string]string{key: stringData} }},
	} {
		v, found, err := memberOf(m.raw, key)
		if err == nil && found {
			err = unmarshal(v, m.into)
		}
		if err != nil {
			return nil, fmt.Errorf("seedwarden: cannot decode object as a Secret: %s.%s: %w", m.name, key, err)
		}
		if found {
			m.set()
		}
	}
	return secret, nil
}

// memberOf is the last member key of the JSON object raw (a decoder accepted
// it), as the decoder would read it; raw absent or null holds none.
func memberOf(raw []byte, key string) (value []byte, found bool, err error) {
	if absent(raw) {
		return nil, false, nil
	}
	w := walker{b: raw}
	var p pruner
	ok := w.object(func(k []byte, escaped bool) bool {
		k, ok := p.key(k, escaped)
		start := w.i
		if !ok || !w.skip() {
			return false
		}
		if string(k) == key {
			value, found = raw[start:w.i], true
		}
		return true
	})
	if !ok {
		return nil, false, errors.New("not an object of strings")
	}
	return value, found, nil
}

// DecodeOldNamespace decodes what the namespace-deletion webhook reads of
// request.oldObject of a Namespace DELETE: its deletionTimestamp. A literal
// null decodes into an empty Namespace.
func DecodeOldNamespace(raw []byte) (*corev1.Namespace, error) {
	if len(raw) == 0 {
		return nil, fmt.Errorf("old object: %w", errNoObject)
	}
	var obj struct {
		Metadata struct {
			DeletionTimestamp *metav1.Time `json:"deletionTimestamp"`
		} `json:"metadata"`
	}
	if err := unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("old object: seedwarden: cannot decode object as a Namespace: %w", err)
	}
	ns := &corev1.Namespace{}
	ns.DeletionTimestamp = obj.Metadata.DeletionTimestamp
	return ns, nil
}

// DecodeObjectName reads metadata.name and metadata.generateName of any
// object (request.object).
func DecodeObjectName(raw []byte) (name, generateName string, err error) {
	var obj struct {
		Metadata struct {
			Name         string `json:"name"`
			GenerateName string `json:"generateName"`
		} `json:"metadata"`
	}
	if err := unmarshal(raw, &obj); err != nil {
		return "", "", fmt.Errorf("seedwarden: cannot decode object metadata: %w", err)
	}
	return obj.Metadata.Name, obj.Metadata.GenerateName, nil
}

// DecodeOptionsKind reads the kind of request.options ("UpdateOptions" for a
// PUT, "PatchOptions" for a PATCH, both UPDATE operations); "" when absent
// or not an object with a kind.
func DecodeOptionsKind(raw []byte) string {
	var opts struct {
		Kind string `json:"kind"`
	}
	if absent(raw) || unmarshal(raw, &opts) != nil {
		return ""
	}
	return opts.Kind
}
