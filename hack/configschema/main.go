// Command configschema writes the JSON schema of seedwarden's configuration
// file, generated from internal/config's types, into the Helm chart's
// values.schema.json as the schema of the chart's config value, so that
// `helm template` and `helm install` refuse an unknown field or a value
// outside an enum before any pod starts. Run it from the repository root
// (make generate); TestSchemaUpToDate fails while the chart's file differs.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
)

// ChartSchema is the chart's values schema, from the repository root.
const ChartSchema = "charts/seedwarden/values.schema.json"

func main() {
	file := flag.String("file", ChartSchema, "the chart's values.schema.json")
	flag.Parse()
	data, err := os.ReadFile(*file)
	if err == nil {
		data, err = WithConfigSchema(data)
	}
	if err == nil {
		err = os.WriteFile(*file, data, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "configschema:", err)
		os.Exit(1)
	}
}

// WithConfigSchema returns the chart's values schema with properties.config
// replaced by the generated schema, written as the chart keeps it: keys
// sorted, two spaces, a final newline.
func WithConfigSchema(values []byte) ([]byte, error) {
	var doc map[string]any
	if err := json.Unmarshal(values, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", ChartSchema, err)
	}
	props, ok := doc["properties"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: no properties object", ChartSchema)
	}
	s, err := Schema()
	if err != nil {
		return nil, err
	}
	props["config"] = s
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
