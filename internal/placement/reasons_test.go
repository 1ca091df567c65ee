package placement

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// declaredConsts reads the string constants of type typ this package's
// source declares, without trusting any list kept beside them.
func declaredConsts(t *testing.T, typ string) []string {
	t.Helper()
	paths, err := filepath.Glob("*.go")
	require.NoError(t, err)
	var out []string
	fset := token.NewFileSet()
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		require.NoError(t, err)
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != typ {
					continue
				}
				for _, v := range vs.Values {
					lit, ok := v.(*ast.BasicLit)
					require.True(t, ok, "%s: %s constant that is not a literal", path, typ)
					s, err := strconv.Unquote(lit.Value)
					require.NoError(t, err)
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// TestReasonCodesComplete walks the steps and codes the source declares:
// every step gives at least one code, every declared code is in
// ReasonCodes, once per step, and every listed code is declared.
func TestReasonCodesComplete(t *testing.T) {
	steps, codes := declaredConsts(t, "Step"), declaredConsts(t, "ReasonCode")
	require.NotEmpty(t, steps)
	require.NotEmpty(t, codes)
	seen := map[string]bool{}
	for _, info := range ReasonCodes {
		key := string(info.Step) + "/" + string(info.Code)
		assert.False(t, seen[key], "%s listed twice", key)
		seen[key] = true
		assert.Contains(t, codes, string(info.Code), "listed but not declared")
		assert.Contains(t, steps, string(info.Step), "%s: step not declared", info.Code)
		assert.Regexp(t, `^[A-Z][a-zA-Z]+$`, string(info.Code), "codes are CamelCase")
	}
	for _, step := range steps {
		assert.True(t, slices.ContainsFunc(ReasonCodes, func(i ReasonCodeInfo) bool { return string(i.Step) == step }),
			"step %s gives no reason code", step)
	}
	for _, code := range codes {
		assert.True(t, slices.ContainsFunc(ReasonCodes, func(i ReasonCodeInfo) bool { return string(i.Code) == code }),
			"code %s declared but not in ReasonCodes", code)
	}
}

// TestReasonCodesDocumented holds docs/placement.md's table of codes to
// ReasonCodes: each row's code, step and kind (seed or decision).
func TestReasonCodesDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/placement.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(doc), "### Reason codes\n")
	require.True(t, ok, "docs/placement.md has no section \"Reason codes\"")
	section, _, _ = strings.Cut(section, "\n#")
	row := regexp.MustCompile("(?m)^\\| `([A-Za-z]+)` \\| ([^|]+) \\| (seed|decision) \\| [^|]*\\S[^|]* \\|$")
	documented := map[string]bool{}
	rows := row.FindAllStringSubmatch(section, -1)
	distinct := map[ReasonCode]bool{}
	for _, info := range ReasonCodes {
		distinct[info.Code] = true
	}
	assert.Len(t, rows, len(distinct), "rows of the table (| `Code` | steps | seed or decision | meaning |)")
	for _, m := range rows {
		code, of := m[1], m[3]
		assert.False(t, documented[code], "%s documented twice", code)
		for _, step := range strings.Split(m[2], ",") {
			documented[code+" "+strings.Trim(strings.TrimSpace(step), "`")+" "+of] = true
		}
		documented[code] = true
	}
	for _, info := range ReasonCodes {
		of := "decision"
		if info.PerSeed {
			of = "seed"
		}
		assert.True(t, documented[string(info.Code)+" "+string(info.Step)+" "+of],
			"%s (step %s, %s) has no row in docs/placement.md's table of reason codes", info.Code, info.Step, of)
	}
	for key := range documented {
		if code, _, found := strings.Cut(key, " "); !found {
			assert.True(t, slices.ContainsFunc(ReasonCodes, func(i ReasonCodeInfo) bool { return string(i.Code) == code }),
				"%s documented but placement gives no such code", code)
		}
	}
}

func TestCodeSummary(t *testing.T) {
	d := Decision{Step: StepCandidates, Total: 4, Reasons: map[string]string{"a": "..", "b": "..", "c": ".."},
		Codes: map[string]ReasonCode{"a": TaintNotTolerated, "b": SeedFull, "c": TaintNotTolerated}}
	s := d.CodeSummary()
	assert.Equal(t, CodeSummary{Step: StepCandidates, Seeds: 4, Counts: map[ReasonCode]int{TaintNotTolerated: 2, SeedFull: 1}}, s)
	assert.Equal(t, []ReasonCode{SeedFull, TaintNotTolerated}, s.All())
	b, err := json.Marshal(s)
	require.NoError(t, err)
	assert.JSONEq(t, `{"step":"Candidates","seeds":4,"counts":{"SeedFull":1,"TaintNotTolerated":2}}`, string(b))

	whole := Decision{Step: StepProject, Code: ProjectNotFound, Total: 4}
	assert.Equal(t, []ReasonCode{ProjectNotFound}, whole.CodeSummary().All())
	scheduled := Decision{Seed: "a"}
	assert.Zero(t, scheduled.CodeSummary())
}
