package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/internal/metrics"
)

// metricsDir is the package that declares every metric (house rule).
const metricsDir = "../internal/metrics"

// metricName is what a seedwarden metric name looks like.
var metricName = regexp.MustCompile(`^seedwarden_[a-z0-9_]+$`)

// declaredMetrics reads the metric names from the Go source of dir, without
// importing it, so that a renamed or added metric shows up here with no change
// to this test: every string constant (concatenations of constants included)
// and every constant string argument or composite-literal value that looks
// like a metric name, plus the names prometheus' Opts build from Namespace,
// Subsystem and Name.
func declaredMetrics(dir string) (map[string]bool, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	consts := map[string]ast.Expr{}
	var files []*ast.File
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
		for _, d := range f.Decls {
			collectConsts(d, consts)
		}
	}
	ev := evaluator{consts: consts}
	names := map[string]bool{}
	add := func(e ast.Expr) {
		if s, ok := ev.eval(e); ok && metricName.MatchString(s) {
			names[s] = true
		}
	}
	for _, e := range consts {
		add(e)
	}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				for _, a := range n.Args {
					add(a)
				}
			case *ast.CompositeLit:
				if fq, ok := ev.fqName(n); ok && metricName.MatchString(fq) {
					names[fq] = true
				}
			}
			return true
		})
	}
	return names, nil
}

// collectConsts records the value expression of every constant in d.
func collectConsts(d ast.Decl, consts map[string]ast.Expr) {
	g, ok := d.(*ast.GenDecl)
	if !ok || g.Tok != token.CONST {
		return
	}
	for _, spec := range g.Specs {
		vs := spec.(*ast.ValueSpec)
		for i, n := range vs.Names {
			if i < len(vs.Values) {
				consts[n.Name] = vs.Values[i]
			}
		}
	}
}

// evaluator computes constant string expressions: literals, constants of the
// package and their concatenations.
type evaluator struct {
	consts map[string]ast.Expr
	depth  int
}

func (ev *evaluator) eval(e ast.Expr) (string, bool) {
	if ev.depth > 50 { // a cycle cannot compile; do not loop on it
		return "", false
	}
	ev.depth++
	defer func() { ev.depth-- }()
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(e.Value)
		return s, err == nil
	case *ast.Ident:
		if v, ok := ev.consts[e.Name]; ok {
			return ev.eval(v)
		}
	case *ast.ParenExpr:
		return ev.eval(e.X)
	case *ast.BinaryExpr:
		if e.Op == token.ADD {
			x, okx := ev.eval(e.X)
			y, oky := ev.eval(e.Y)
			return x + y, okx && oky
		}
	}
	return "", false
}

// fqName joins the Namespace, Subsystem and Name of a prometheus Opts literal
// as prometheus.BuildFQName does.
func (ev *evaluator) fqName(lit *ast.CompositeLit) (string, bool) {
	parts := map[string]string{}
	for _, elt := range lit.Elts {
		kv, ok := elt.(*ast.KeyValueExpr)
		if !ok {
			continue
		}
		key, ok := kv.Key.(*ast.Ident)
		if !ok {
			continue
		}
		if v, ok := ev.eval(kv.Value); ok {
			parts[key.Name] = v
		}
	}
	if parts["Name"] == "" {
		return "", false
	}
	var fq []string
	for _, k := range []string{"Namespace", "Subsystem", "Name"} {
		if parts[k] != "" {
			fq = append(fq, parts[k])
		}
	}
	return strings.Join(fq, "_"), true
}

// Every metric internal/metrics declares must have a row in metrics.md, and
// every seedwarden metric metrics.md gives a row must still exist.
func TestMetricsDocumentsEveryMetric(t *testing.T) {
	declared, err := declaredMetrics(metricsDir)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(declared), 20, "found too few metric names in %s: %v", metricsDir, declared)

	doc, err := os.ReadFile("metrics.md")
	require.NoError(t, err)
	row := regexp.MustCompile("(?m)^\\| `(seedwarden_[a-z0-9_]+)` \\|")
	rows := map[string]bool{}
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		rows[m[1]] = true
	}
	for name := range declared {
		assert.True(t, rows[name], "metrics.md has no row for %s, declared in internal/metrics", name)
	}
	for name := range rows {
		assert.True(t, declared[name], "metrics.md documents %s, which internal/metrics does not declare", name)
	}
}

// The source reader finds names however they are spelled: a constant, a
// concatenation, a literal argument, Namespace+Name in Opts; and not help
// texts that mention a name.
func TestDeclaredMetrics(t *testing.T) {
	dir := t.TempDir()
	src := `package m

const prefix = "seedwarden_"
const (
	AName = prefix + "a_total"
	Label = "profile"
)

var b = NewCounter(CounterOpts{Namespace: "seedwarden", Subsystem: "x", Name: "b_seconds", Help: "see seedwarden_a_total"})
var c = desc("seedwarden_c_ratio", "help")
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "m.go"), []byte(src), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "m_test.go"), []byte("package m\nconst T = \"seedwarden_test_only\"\n"), 0o600))
	got, err := declaredMetrics(dir)
	require.NoError(t, err)
	assert.Equal(t, map[string]bool{"seedwarden_a_total": true, "seedwarden_x_b_seconds": true, "seedwarden_c_ratio": true}, got)
}

// The label values operators match on in alerts are listed in the metric's
// row: a new reason or state must be documented with it.
func TestMetricsDocumentReservationLabelValues(t *testing.T) {
	doc, err := os.ReadFile("metrics.md")
	require.NoError(t, err)
	for name, values := range map[string][]string{
		metrics.ReservationsRefusedName: {
			metrics.RefusedStoreMemory, metrics.RefusedStoreAPIServer,
			metrics.RefusedReasonNamespace, metrics.RefusedReasonUser, metrics.RefusedReasonTotal,
		},
		metrics.ReservationsExpiredName: {metrics.ExpiredUnconfirmed, metrics.ExpiredConfirmed},
	} {
		row := regexp.MustCompile("(?m)^\\| `" + name + "` \\|[^|]*\\|([^|]*)\\|").FindSubmatch(doc)
		require.NotNil(t, row, "metrics.md has no row for %s", name)
		for _, v := range values {
			assert.Contains(t, string(row[1]), "`"+v+"`", "%s: label value %q", name, v)
		}
	}
}
