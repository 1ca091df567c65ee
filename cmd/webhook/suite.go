package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/landscape"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// A test suite (`webhook test`, docs/cli.md "webhook test"; its JSON
// Schema is docs/test-suite.schema.json): a landscape and cases, each with
// the outcome expected of the webhook's own decision code. This file reads
// and checks the suite; suite_run.go decides the cases.

// suite is a test suite file as written.
type suite struct {
	// Landscape, Config and Autoscalers are files, relative to the suite.
	Landscape   string      `yaml:"landscape"`
	Config      string      `yaml:"config"`
	Autoscalers string      `yaml:"autoscalers"`
	Cases       []suiteCase `yaml:"cases"`
}

type suiteCase struct {
	Name string `yaml:"name"`
	// Shoot is a Shoot to place: a file relative to the suite, or inline.
	Shoot          yaml.Node        `yaml:"shoot"`
	SeedChange     *suiteSeedChange `yaml:"seedChange"`
	SeedAutoscaler string           `yaml:"seedAutoscaler"`
	Expect         suiteExpect      `yaml:"expect"`
}

// suiteSeedChange moves a Shoot of the landscape to another seed, as a
// user with permission to bind does (shoots/binding).
type suiteSeedChange struct {
	Shoot string `yaml:"shoot"` // NAMESPACE/NAME
	Seed  string `yaml:"seed"`
}

type suiteExpect struct {
	Seed          string   `yaml:"seed"`
	Unschedulable []string `yaml:"unschedulable"`
	Binding       string   `yaml:"binding"`
	Capacity      string   `yaml:"capacity"`
	Replicas      *int32   `yaml:"replicas"`
}

// The verdicts a seed change expects of a guard.
const (
	verdictAllowed = "allowed"
	verdictDenied  = "denied"
)

// Case kinds, as the table names them.
const (
	kindShoot          = "shoot"
	kindSeedChange     = "seedChange"
	kindSeedAutoscaler = "seedAutoscaler"
)

// loadedSuite is a suite read and checked: files resolved, Shoots decoded.
type loadedSuite struct {
	path  string
	at    positions
	suite suite
	// shoots are the decoded Shoots of shoot cases, by case index.
	shoots map[int]*api.Shoot
}

// suiteError is bad input: the message starts with the file position.
type suiteError struct{ msg string }

func (e *suiteError) Error() string { return e.msg }

// readSuite reads and checks the suite file path. Every problem names the
// field, its value and its position in the file (FILE:LINE:COLUMN).
func readSuite(path string) (*loadedSuite, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseSuite(path, data)
}

// parseSuite is readSuite on the file's contents; every error is a
// *suiteError.
func parseSuite(path string, data []byte) (*loadedSuite, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, &suiteError{fmt.Sprintf("%s: %v", path, err)}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	ls := &loadedSuite{path: path, shoots: map[int]*api.Shoot{}}
	if err := dec.Decode(&ls.suite); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &suiteError{path + ": empty: want landscape and cases"}
		}
		return nil, &suiteError{decodeProblems(path, err)}
	}
	at := positions{path: path, root: &root}
	ls.at = at
	var problems []string
	if len(ls.suite.Cases) == 0 {
		problems = append(problems, at.of(nil, "cases")+": cases: no case in the suite")
	}
	seen := map[string]bool{}
	for i := range ls.suite.Cases {
		problems = append(problems, ls.checkCase(at, i, seen)...)
	}
	if len(problems) > 0 {
		return nil, &suiteError{strings.Join(problems, "\n")}
	}
	return ls, nil
}

// rel is a file the suite names, relative to the suite's directory.
func (ls *loadedSuite) rel(file string) string {
	if file == "" || filepath.IsAbs(file) {
		return file
	}
	return filepath.Join(filepath.Dir(ls.path), file)
}

// kind is the kind of case i.
func (c *suiteCase) kind() string {
	switch {
	case c.SeedChange != nil:
		return kindSeedChange
	case c.SeedAutoscaler != "":
		return kindSeedAutoscaler
	}
	return kindShoot
}

// checkCase checks case i: one subject, the expectations of its kind.
func (ls *loadedSuite) checkCase(at positions, i int, seen map[string]bool) []string {
	c := &ls.suite.Cases[i]
	field := fmt.Sprintf("cases[%d]", i)
	var problems []string
	bad := func(key, format string, args ...any) {
		problems = append(problems, at.of(&i, key)+": "+field+"."+key+": "+fmt.Sprintf(format, args...))
	}
	switch {
	case c.Name == "":
		bad("name", "required")
	case seen[c.Name]:
		bad("name", "%q is given twice", c.Name)
	}
	seen[c.Name] = true
	subjects := 0
	for _, set := range []bool{!c.Shoot.IsZero(), c.SeedChange != nil, c.SeedAutoscaler != ""} {
		if set {
			subjects++
		}
	}
	if subjects != 1 {
		bad("name", "%q: want exactly one of shoot, seedChange and seedAutoscaler, found %d", c.Name, subjects)
		return problems
	}
	for _, key := range c.Expect.foreign(c.kind()) {
		// A case would pass whatever the webhook answers there: no
		// expectation of another kind is ever compared.
		bad("expect."+key, "a %s case does not decide %s", c.kind(), key)
	}
	ls.checkKind(i, bad)
	return problems
}

// checkKind checks what case i's kind needs: a shoot case's Shoot and
// expected seed or codes, a seed change's Shoot, seed and verdicts, a
// SeedAutoscaler's replicas. bad records a problem with a key of the case.
func (ls *loadedSuite) checkKind(i int, bad func(key, format string, args ...any)) {
	c := &ls.suite.Cases[i]
	e := c.Expect
	switch c.kind() {
	case kindShoot:
		if (e.Seed == "") == (len(e.Unschedulable) == 0) {
			bad("expect", "a shoot case expects either seed or unschedulable (reason codes)")
		}
		for j, code := range e.Unschedulable {
			if !knownCode(code) {
				bad(fmt.Sprintf("expect.unschedulable[%d]", j), "unknown reason code %q (docs/placement.md, Reason codes)", code)
			}
		}
		sh, err := ls.decodeShoot(&c.Shoot)
		if err != nil {
			bad("shoot", "%v", err)
		}
		ls.shoots[i] = sh
	case kindSeedChange:
		if ns, name, ok := strings.Cut(c.SeedChange.Shoot, "/"); !ok || ns == "" || name == "" {
			bad("seedChange.shoot", "%q: want NAMESPACE/NAME of a Shoot of the landscape", c.SeedChange.Shoot)
		}
		if c.SeedChange.Seed == "" {
			bad("seedChange.seed", "required")
		}
		if e.Binding == "" && e.Capacity == "" {
			bad("expect", "a seedChange case expects binding or capacity (allowed or denied)")
		}
		for key, v := range map[string]string{"expect.binding": e.Binding, "expect.capacity": e.Capacity} {
			if v != "" && v != verdictAllowed && v != verdictDenied {
				bad(key, "unsupported value %q (want %s or %s)", v, verdictAllowed, verdictDenied)
			}
		}
	case kindSeedAutoscaler:
		if e.Replicas == nil {
			bad("expect", "a seedAutoscaler case expects replicas")
		}
		if ls.suite.Autoscalers == "" {
			bad("seedAutoscaler", "%q: the suite names no autoscalers file", c.SeedAutoscaler)
		}
	}
}

// expectsOf are the expectations each kind of case compares.
var expectsOf = map[string][]string{
	kindShoot:          {"seed", "unschedulable"},
	kindSeedChange:     {"binding", "capacity"},
	kindSeedAutoscaler: {"replicas"},
}

// foreign are the expectations e sets that a case of kind does not compare.
func (e suiteExpect) foreign(kind string) []string {
	set := map[string]bool{
		"seed": e.Seed != "", "unschedulable": len(e.Unschedulable) > 0,
		"binding": e.Binding != "", "capacity": e.Capacity != "", "replicas": e.Replicas != nil,
	}
	var out []string
	for _, key := range suiteFields["suiteExpect"] {
		if set[key] && !slices.Contains(expectsOf[kind], key) {
			out = append(out, key)
		}
	}
	return out
}

// decodeShoot reads a shoot case's Shoot: a file name or an inline object.
func (ls *loadedSuite) decodeShoot(n *yaml.Node) (*api.Shoot, error) {
	if n.Kind == yaml.ScalarNode {
		file := ls.rel(n.Value)
		sh, err := readShoot(file)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", n.Value, err)
		}
		return sh, nil
	}
	var obj any
	if err := n.Decode(&obj); err != nil {
		return nil, err
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	return landscape.DecodeShoot(data)
}

func knownCode(code string) bool {
	return slices.ContainsFunc(placement.ReasonCodes, func(i placement.ReasonCodeInfo) bool { return string(i.Code) == code })
}

// positions finds where a field of the suite is written.
type positions struct {
	path string
	root *yaml.Node
}

// of is FILE:LINE:COLUMN of key in case *i (in the top level when i is
// nil); the case's own position when the key is not written, the file's
// start when neither is.
func (p positions) of(i *int, key string) string {
	n := p.root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	if i != nil {
		cases := mapValue(n, "cases")
		if cases == nil || cases.Kind != yaml.SequenceNode || *i >= len(cases.Content) {
			return p.path + ":1:1"
		}
		n = cases.Content[*i]
	}
	at := n
	for _, k := range strings.Split(key, ".") {
		name, index, indexed := strings.Cut(strings.TrimSuffix(k, "]"), "[")
		v := mapValue(at, name)
		if v == nil {
			break
		}
		at = v
		var j int
		if _, err := fmt.Sscan(index, &j); indexed && err == nil && v.Kind == yaml.SequenceNode && j < len(v.Content) {
			at = v.Content[j]
		}
	}
	return fmt.Sprintf("%s:%d:%d", p.path, at.Line, at.Column)
}

// suiteFields are the fields of each object of a suite, by the Go type the
// YAML decoder names in its errors.
var suiteFields = map[string][]string{
	"suite":           {"landscape", "config", "autoscalers", "cases"},
	"suiteCase":       {"name", "shoot", "seedChange", "seedAutoscaler", "expect"},
	"suiteSeedChange": {"shoot", "seed"},
	"suiteExpect":     {"seed", "unschedulable", "binding", "capacity", "replicas"},
}

var unknownFieldError = regexp.MustCompile(`^line (\d+): field (\S+) not found in type main\.(\w+)$`)

// decodeProblems words the YAML decoder's errors with the file and line,
// and an unknown field with the nearest known one.
func decodeProblems(path string, err error) string {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return fmt.Sprintf("%s: %s", path, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	out := make([]string, len(te.Errors))
	for i, e := range te.Errors {
		m := unknownFieldError.FindStringSubmatch(e)
		if m == nil {
			out[i] = path + ": " + e
			continue
		}
		known := suiteFields[m[3]]
		out[i] = fmt.Sprintf("%s:%s: unknown field %q", path, m[1], m[2])
		if s := nearest(m[2], known); s != "" {
			out[i] += fmt.Sprintf("; did you mean %q?", s)
		} else {
			out[i] += " (want one of " + strings.Join(known, ", ") + ")"
		}
	}
	return strings.Join(out, "\n")
}

// mapValue is the value of key in mapping n, or nil.
func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for j := 0; j+1 < len(n.Content); j += 2 {
		if n.Content[j].Value == key {
			return n.Content[j+1]
		}
	}
	return nil
}
