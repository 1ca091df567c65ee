package cache

import (
	"encoding/hex"
	"math"
	"strconv"
	"unique"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
)

// ReducedShoot is what TransformShoot keeps of a Shoot in the informer's
// cache: 96 bytes plus the name, where a reduced *api.Shoot took 480 plus a
// dozen separately allocated strings (BENCHMARKS.md). Namespace, seed and
// scheduler names are interned (unique.Handle: one copy per distinct name);
// a canonical UUID and a decimal resourceVersion are kept as numbers; what
// few Shoots carry (deletion, a self-hosted pool, the reservation and token
// annotations, an unusual uid or resourceVersion) lives in extra.
//
// It is a client.Object so that informers, controller-runtime sources and
// event handlers carry it; code that reads Shoots from such a cache gets the
// reduced Shoot back as an *api.Shoot with ShootOf. It is read-only: setters
// of fields it does not keep do nothing.
type ReducedShoot struct {
	name       string
	namespace  unique.Handle[string]
	seed       unique.Handle[string] // spec.seedName
	statusSeed unique.Handle[string] // status.seedName
	scheduler  unique.Handle[string] // spec.schedulerName
	staying    StayingKey            // what placement.CheckStaying reads (staying.go)
	uid        [16]byte              // a canonical UUID; zero: extra.uid
	rv         uint64                // a canonical decimal > 0; zero: extra.rv
	extra      *reducedExtra
	generation uint32 // when it fits (hasGeneration); else extra.generation
	flags      uint8
}

// flags: which pointers were set (nil and "" differ in an *api.Shoot) and
// whether TypeMeta was the Shoot's own.
const (
	hasSeed uint8 = 1 << iota
	hasStatusSeed
	hasScheduler
	typedShoot
	hasGeneration
)

// reducedExtra holds what only a few Shoots need.
type reducedExtra struct {
	typeMeta    metav1.TypeMeta // when neither empty nor the Shoot's
	uid         types.UID
	rv          string
	generation  int64
	deletion    *metav1.Time
	pool        string // the self-hosted control-plane pool
	selfHosted  bool
	annotations map[string]string
}

var shootTypeMeta = metav1.TypeMeta{APIVersion: api.SchemeGroupVersion.String(), Kind: "Shoot"}

func intern(s string) unique.Handle[string] { return unique.Make(s) }

// str is the interned string; "" for a zero handle.
func str(h unique.Handle[string]) string {
	if h == (unique.Handle[string]{}) {
		return ""
	}
	return h.Value()
}

func (r *ReducedShoot) extraFor() *reducedExtra {
	if r.extra == nil {
		r.extra = &reducedExtra{}
	}
	return r.extra
}

// setUID keeps a canonical lower-case UUID in 16 bytes.
func (r *ReducedShoot) setUID(uid types.UID) {
	r.uid = [16]byte{}
	if len(uid) == 36 && uid[8] == '-' && uid[13] == '-' && uid[18] == '-' && uid[23] == '-' {
		s := string(uid)
		hexs := s[0:8] + s[9:13] + s[14:18] + s[19:23] + s[24:36]
		if n, err := hex.Decode(r.uid[:], []byte(hexs)); err == nil && n == 16 && r.uid != [16]byte{} && r.GetUID() == uid {
			if r.extra != nil {
				r.extra.uid = ""
			}
			return
		}
		r.uid = [16]byte{}
	}
	if uid != "" || r.extra != nil {
		r.extraFor().uid = uid
	}
}

// setGeneration keeps a generation in 4 bytes when it fits (it counts spec
// changes: in practice always).
func (r *ReducedShoot) setGeneration(g int64) {
	r.flags &^= hasGeneration
	r.generation = 0
	if g >= 0 && g <= math.MaxUint32 {
		r.generation, r.flags = uint32(g), r.flags|hasGeneration
		return
	}
	r.extraFor().generation = g
}

// setResourceVersion keeps a canonical decimal in 8 bytes.
func (r *ReducedShoot) setResourceVersion(rv string) {
	r.rv = 0
	if v, err := strconv.ParseUint(rv, 10, 64); err == nil && v > 0 && strconv.FormatUint(v, 10) == rv {
		r.rv = v
		if r.extra != nil {
			r.extra.rv = ""
		}
		return
	}
	if rv != "" || r.extra != nil {
		r.extraFor().rv = rv
	}
}

func setHandle(h *unique.Handle[string], flags *uint8, bit uint8, p *string) {
	*flags &^= bit
	*h = unique.Handle[string]{}
	if p != nil {
		*flags |= bit
		*h = intern(*p)
	}
}

func getHandle(h unique.Handle[string], flags, bit uint8) *string {
	if flags&bit == 0 {
		return nil
	}
	return ptr.To(str(h))
}

// Shoot returns the reduced Shoot as the *api.Shoot the transform used to
// keep: identity, generation, deletion, spec.seedName, spec.schedulerName,
// status.seedName, the self-hosted pool and the kept annotations.
func (r *ReducedShoot) Shoot() *api.Shoot {
	out := &api.Shoot{
		TypeMeta: r.typeMeta(),
		ObjectMeta: metav1.ObjectMeta{
			Name: r.name, Namespace: str(r.namespace), UID: r.GetUID(),
			ResourceVersion: r.GetResourceVersion(), Generation: r.GetGeneration(),
			DeletionTimestamp: r.GetDeletionTimestamp(), Annotations: r.GetAnnotations(),
		},
		Spec: api.ShootSpec{
			SeedName:      getHandle(r.seed, r.flags, hasSeed),
			SchedulerName: getHandle(r.scheduler, r.flags, hasScheduler),
		},
		Status: api.ShootStatus{SeedName: getHandle(r.statusSeed, r.flags, hasStatusSeed)},
	}
	if x := r.extra; x != nil && x.selfHosted {
		out.Spec.Provider.Workers = []api.Worker{{Name: x.pool, ControlPlane: &api.WorkerControlPlane{}}}
	}
	if x := r.extra; x != nil && x.annotations != nil {
		out.Annotations = make(map[string]string, len(x.annotations))
		for k, v := range x.annotations {
			out.Annotations[k] = v
		}
	}
	return out
}

// ShootOf returns obj as an *api.Shoot: itself, or a ReducedShoot expanded
// (a new object each call). For code that reads Shoots from a cache that
// uses TransformShoot, such as the retry controller's event handlers.
func ShootOf(obj any) (*api.Shoot, bool) {
	switch o := obj.(type) {
	case *api.Shoot:
		return o, o != nil
	case *ReducedShoot:
		if o == nil {
			return nil, false
		}
		return o.Shoot(), true
	}
	return nil, false
}

// chargedSeeds is placement.ChargedSeeds of the reduced Shoot.
func (r *ReducedShoot) chargedSeeds() (spec, status string) {
	spec, status = str(r.seed), str(r.statusSeed)
	if status == spec {
		status = ""
	}
	return spec, status
}

func (r *ReducedShoot) annotation(key string) string {
	if r.extra == nil {
		return ""
	}
	return r.extra.annotations[key]
}

func (r *ReducedShoot) typeMeta() metav1.TypeMeta {
	switch {
	case r.flags&typedShoot != 0:
		return shootTypeMeta
	case r.extra != nil:
		return r.extra.typeMeta
	}
	return metav1.TypeMeta{}
}

// GetObjectKind is runtime.Object's: a copy, so setting it changes nothing.
func (r *ReducedShoot) GetObjectKind() schema.ObjectKind {
	tm := r.typeMeta()
	return &tm
}

// DeepCopyObject is runtime.Object's.
func (r *ReducedShoot) DeepCopyObject() runtime.Object {
	out := *r
	if r.extra != nil {
		x := *r.extra
		if x.deletion != nil {
			x.deletion = x.deletion.DeepCopy()
		}
		if x.annotations != nil {
			x.annotations = make(map[string]string, len(r.extra.annotations))
			for k, v := range r.extra.annotations {
				x.annotations[k] = v
			}
		}
		out.extra = &x
	}
	return &out
}
