package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/seedwarden/seedwarden/internal/config"
)

// A field of a Go type, by its JSON name: where an enum or a bound applies.
type field struct {
	in   reflect.Type
	name string
}

func fieldOf[T any](name string) field { return field{reflect.TypeFor[T](), name} }

// enums are the values Validate accepts for a field, spelled by
// internal/config's constants so that a new value reaches the schema.
var enums = map[field][]string{
	fieldOf[config.Config]("apiVersion"):               {config.APIVersion},
	fieldOf[config.Config]("kind"):                     {config.Kind},
	fieldOf[config.Config]("strategy"):                 {config.StrategySameRegion, config.StrategyMinimalDistance},
	fieldOf[config.Config]("networkOverlap"):           {config.NetworkOverlapDisjoint, config.NetworkOverlapAllowIPv4},
	fieldOf[config.Placement]("mode"):                  {config.PlacementViaBinding, config.PlacementViaPatch},
	fieldOf[config.Capacity]("coordination"):           {config.CoordinationLocal, config.CoordinationAPIServer},
	fieldOf[config.ResourceSize]("operationMode"):      {config.OperationModeBlock, config.OperationModeLog},
	fieldOf[config.ResourceAdmission]("operationMode"): {config.OperationModeBlock, config.OperationModeLog},
	fieldOf[config.PendingShoots]("bindMode"):          {config.BindThroughSubresource, config.BindThroughUpdate},
	fieldOf[config.Binding]("enforcement"):             enforcements,
	fieldOf[config.Capacity]("enforcement"):            enforcements,
	fieldOf[config.ResourceSize]("enforcement"):        enforcements,
	fieldOf[config.SizeLimit]("enforcement"):           enforcements,
	fieldOf[config.CountLimit]("enforcement"):          enforcements,
	fieldOf[config.KubeconfigSecret]("enforcement"):    enforcements,
	fieldOf[config.NamespaceDeletion]("enforcement"):   enforcements,
	fieldOf[config.Subject]("kind"):                    {config.SubjectUser, config.SubjectGroup, config.SubjectServiceAccount},
	fieldOf[rbacv1.Subject]("kind"):                    {rbacv1.UserKind, rbacv1.GroupKind, rbacv1.ServiceAccountKind},
	fieldOf[config.Pool]("mode"):                       {config.PoolRequired, config.PoolPreferred},
}

// enforcements are the values of every guard's enforcement.
var enforcements = []string{config.EnforcementDeny, config.EnforcementWarn, config.EnforcementDryRun}

// bound is an integer range. An omitted number is 0, which takes the
// default: the schema allows 0 where Validate's lower bound is above it.
type bound struct{ minimum, maximum int64 }

const unbounded = -1

var bounds = map[field]bound{
	fieldOf[config.Server]("maxRequestBytes"):         {0, config.MaxMaxRequestBytes},
	fieldOf[config.Server]("maxRequestBytesInFlight"): {0, config.MaxMaxRequestBytesInFlight},
	fieldOf[config.Reservations]("maxPerNamespace"):   {0, config.MaxMaxReservations},
	fieldOf[config.Reservations]("maxPerUser"):        {0, config.MaxMaxReservations},
	fieldOf[config.Reservations]("maxTotal"):          {0, config.MaxMaxReservations},
	fieldOf[config.HeadroomProfile]("limit"):          {0, config.MaxHeadroomLimit},
	fieldOf[config.HeadroomProfile]("alertBelow"):     {0, config.MaxHeadroomLimit},
	fieldOf[config.PendingShoots]("workers"):          {0, unbounded},
	fieldOf[config.Scoring]("defaultCapacity"):        {0, unbounded},
	fieldOf[config.Policies]("softLimitPercent"):      {0, 100},
	fieldOf[config.KeptSeats]("seats"):                {0, unbounded},
	fieldOf[config.KeptSeats]("percent"):              {0, 100},
}

// durationPattern is what time.ParseDuration reads ("" takes the default);
// ranges are Validate's, as the schema cannot compare durations.
const durationPattern = `^$|^[-+]?(0|([0-9]*(\.[0-9]*)?(ns|us|µs|μs|ms|s|m|h))+)$`

// Types with a JSON form of their own.
var (
	durationType = reflect.TypeFor[config.Duration]()
	quantityType = reflect.TypeFor[config.Quantity]()
	rawType      = reflect.TypeFor[json.RawMessage]()
)

// Schema is the JSON schema of the configuration file: every field of
// config.Config by its JSON name and nothing else.
func Schema() (map[string]any, error) { return generate(enums, bounds) }

// generate fails on an enum or a bound for a field the types do not have,
// so that renaming a field cannot silently drop its rule from the schema.
func generate(enums map[field][]string, bounds map[field]bound) (map[string]any, error) {
	g := generator{enums: enums, bounds: bounds, used: map[field]bool{}}
	s := g.schema(reflect.TypeFor[config.Config]())
	s["required"] = []string{"apiVersion", "kind"}
	s["description"] = "the webhook's configuration file: every field of internal/config; " +
		"rules across fields are checked by `webhook validate` and at start-up"
	var unused []string
	for f := range enums {
		if !g.used[f] {
			unused = append(unused, f.in.String()+"."+f.name)
		}
	}
	for f := range bounds {
		if !g.used[f] {
			unused = append(unused, f.in.String()+"."+f.name)
		}
	}
	if len(unused) > 0 {
		sort.Strings(unused)
		return nil, fmt.Errorf("enums or bounds for fields that do not exist: %s", strings.Join(unused, ", "))
	}
	return s, nil
}

type generator struct {
	enums  map[field][]string
	bounds map[field]bound
	used   map[field]bool
}

func (g generator) schema(t reflect.Type) map[string]any {
	switch t {
	case durationType:
		return map[string]any{"type": "string", "pattern": durationPattern}
	case quantityType:
		return map[string]any{"type": []string{"string", "number"}}
	case rawType:
		return map[string]any{"description": "kept raw by internal/config and checked by `webhook validate`"}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return g.schema(t.Elem())
	case reflect.Struct:
		return g.object(t)
	case reflect.Slice:
		return map[string]any{"type": "array", "items": g.schema(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": g.schema(t.Elem())}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	}
	panic(fmt.Sprintf("configschema: no JSON schema for Go type %s", t))
}

// object is a struct's schema: its JSON fields (those of embedded structs
// without a name of their own included), no others.
func (g generator) object(t reflect.Type) map[string]any {
	props := map[string]any{}
	for name, f := range JSONFields(t) {
		s := g.schema(f.Type)
		key := field{t, name}
		if values, ok := g.enums[key]; ok {
			delete(s, "type")
			s["enum"] = values
			g.used[key] = true
		}
		if b, ok := g.bounds[key]; ok {
			s["minimum"] = b.minimum
			if b.maximum != unbounded {
				s["maximum"] = b.maximum
			}
			g.used[key] = true
		}
		props[name] = s
	}
	return map[string]any{"type": "object", "additionalProperties": false, "properties": props}
}

// JSONFields are the fields encoding/json reads into a struct, by name.
func JSONFields(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case tag == "-":
			continue
		case f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct:
			for name, inner := range JSONFields(f.Type) {
				out[name] = inner
			}
			continue
		case !f.IsExported():
			continue
		case tag == "":
			tag = f.Name
		}
		out[tag] = f
	}
	return out
}
