package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// Loading a configuration file: strict decoding, errors that name the
// field and the value.

// Check is a rule that needs what another package accepts (this package
// imports none of seedwarden's): it returns problems as "path: problem"
// lines, like Validate's. cmd/webhook passes its checks to Load.
type Check func(*Config) []string

// Load reads, decodes, defaults and validates a configuration file, with
// Validate and the checks.
func Load(path string, checks ...Check) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c, err := Parse(data, checks...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Parse decodes, defaults and validates a configuration (YAML or JSON),
// with Validate and the checks. Unknown fields and invalid values are
// reported together.
func Parse(data []byte, checks ...Check) (*Config, error) {
	c, unknown, err := decode(data)
	if err != nil {
		return nil, err
	}
	c.applyDefaults()
	var problems []string
	problems = append(problems, unknown...)
	var invalid *Error
	if err := c.Validate(); errors.As(err, &invalid) {
		problems = append(problems, invalid.Problems...)
	}
	for _, check := range checks {
		problems = append(problems, check(c)...)
	}
	if len(problems) > 0 {
		return nil, &Error{Problems: problems}
	}
	return c, nil
}

// decode is strict: unknown and duplicate fields come back as problems naming
// their path (an unknown one with the nearest known name, suggest.go); a
// value of the wrong type is an error.
func decode(data []byte) (c *Config, unknown []string, err error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil, &Error{Problems: []string{"the file is empty (want apiVersion: " + APIVersion + ", kind: " + Kind + ")"}}
	}
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, nil, fmt.Errorf("not valid YAML or JSON: %w", err)
	}
	c = &Config{}
	strictErrs, err := sigsjson.UnmarshalStrict(js, c)
	if err != nil {
		return nil, nil, &Error{Problems: []string{describeDecodeError(err)}}
	}
	for _, se := range strictErrs {
		unknown = append(unknown, describeStrictError(se))
	}
	return c, unknown, nil
}

func describeStrictError(err error) string {
	fe, ok := err.(sigsjson.FieldError)
	if !ok {
		return err.Error()
	}
	kind, _, _ := strings.Cut(err.Error(), ` "`) // "unknown field" or "duplicate field"
	if kind == unknownField {
		if s := suggestField(fe.FieldPath()); s != "" {
			return fmt.Sprintf("%s: %s; did you mean %q?", fe.FieldPath(), kind, s)
		}
	}
	return fmt.Sprintf("%s: %s", fe.FieldPath(), kind)
}

// unknownField is how sigs.k8s.io/json's strict errors begin for a field
// the configuration does not have.
const unknownField = "unknown field"

func describeDecodeError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			field = "(top level)"
		}
		return fmt.Sprintf("%s: cannot use %s here (want %s)", field, te.Value, jsonKind(te.Type.Kind().String()))
	}
	return err.Error()
}

func jsonKind(goKind string) string {
	switch {
	case strings.HasPrefix(goKind, "int"), strings.HasPrefix(goKind, "uint"):
		return "an integer"
	case strings.HasPrefix(goKind, "float"):
		return "a number"
	case goKind == "string":
		return "a string"
	case goKind == "bool":
		return "true or false"
	case goKind == "struct", goKind == "map":
		return "an object"
	case goKind == "slice", goKind == "array":
		return "a list"
	default:
		return goKind
	}
}

// Error lists every problem found in a configuration.
type Error struct {
	Problems []string
}

func (e *Error) Error() string {
	if len(e.Problems) == 1 {
		return "invalid configuration: " + e.Problems[0]
	}
	return "invalid configuration:\n  " + strings.Join(e.Problems, "\n  ")
}

type problems struct{ list []string }

func (p *problems) add(path, format string, args ...any) {
	p.list = append(p.list, path+": "+fmt.Sprintf(format, args...))
}
