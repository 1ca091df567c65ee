package chartcheck

import (
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"
)

// What the two renderings name differently by design, and is normalised
// before they are compared.
const (
	// ConfigName is the configuration ConfigMap: kustomize appends a hash of
	// its content to the name (a change rolls the Deployment), the chart
	// keeps the name and rolls with a checksum annotation instead.
	ConfigName = "seedwarden-config"
	// ChecksumAnnotation is the chart's pod-template annotation.
	ChecksumAnnotation = "checksum/config"
	// ConfigFile is the configuration's key in the ConfigMap.
	ConfigFile = "config.yaml"
	// DashboardFile is the Grafana dashboard's key in its ConfigMap.
	DashboardFile = "seedwarden-dashboard.json"
)

// Normalize indexes objects by Key and removes what differs by design: the
// ConfigMap's hash suffix (and the Deployment's reference to it), the chart's
// checksum annotation, and the formatting of the files inside ConfigMaps
// (compared as parsed YAML/JSON, so the base's comments do not count).
func Normalize(objs []Object) (map[string]Object, error) {
	out := map[string]Object{}
	for _, o := range objs {
		o, err := deepCopy(o)
		if err != nil {
			return nil, err
		}
		switch Kind(o) {
		case "ConfigMap":
			if err := normalizeConfigMap(o); err != nil {
				return nil, err
			}
		case "Deployment":
			normalizeDeployment(o)
		}
		k := Key(o)
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("%s rendered twice", k)
		}
		out[k] = o
	}
	return out, nil
}

func normalizeConfigMap(o Object) error {
	m := o["metadata"].(map[string]any)
	if name := Name(o); strings.HasPrefix(name, ConfigName+"-") {
		m["name"] = ConfigName
	}
	data, _ := o["data"].(map[string]any)
	for _, key := range []string{ConfigFile, DashboardFile} {
		s, ok := data[key].(string)
		if !ok {
			continue
		}
		var v any
		if err := yaml.Unmarshal([]byte(s), &v); err != nil {
			return fmt.Errorf("ConfigMap %s: %s: %w", Name(o), key, err)
		}
		data[key] = v
	}
	return nil
}

func normalizeDeployment(o Object) {
	tmpl := path(o, "spec", "template")
	if md, ok := tmpl["metadata"].(map[string]any); ok {
		if ann, ok := md["annotations"].(map[string]any); ok {
			delete(ann, ChecksumAnnotation)
			if len(ann) == 0 {
				delete(md, "annotations")
			}
		}
	}
	vols, _ := path(tmpl, "spec")["volumes"].([]any)
	for _, v := range vols {
		cm, ok := v.(map[string]any)["configMap"].(map[string]any)
		if ok && strings.HasPrefix(fmt.Sprint(cm["name"]), ConfigName+"-") {
			cm["name"] = ConfigName
		}
	}
}

// path walks nested maps; a missing step gives an empty map.
func path(o map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		next, ok := o[k].(map[string]any)
		if !ok {
			return map[string]any{}
		}
		o = next
	}
	return o
}

func deepCopy(o Object) (Object, error) {
	data, err := yaml.Marshal(o)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Key(o), err)
	}
	var c Object
	if err := yaml.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", Key(o), err)
	}
	return c, nil
}
