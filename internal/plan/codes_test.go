package plan

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/internal/placement"
)

// TestPlanReasonCodesDocumented holds docs/placement.md's table of the
// codes a plan adds to ReasonCodes, row for row, and keeps them apart from
// placement's.
func TestPlanReasonCodesDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/placement.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(doc), "#### Codes a plan adds\n")
	require.True(t, ok, "docs/placement.md has no section \"Codes a plan adds\"")
	section, _, _ = strings.Cut(section, "\n#")
	rows := regexp.MustCompile("(?m)^\\| `([A-Za-z]+)` \\| `([A-Za-z-]+)` \\| (seed|decision) \\| [^|]+ \\|$").FindAllStringSubmatch(section, -1)
	require.Len(t, rows, len(ReasonCodes))
	for i, info := range ReasonCodes {
		step, of := string(info.Step), "decision"
		if step == "" {
			step = "-"
		}
		if info.PerSeed {
			of = "seed"
		}
		assert.Equal(t, []string{string(info.Code), step, of}, rows[i][1:4], "row %d", i+1)
		for _, p := range placement.ReasonCodes {
			assert.NotEqual(t, p.Code, info.Code, "a plan's code is not one of placement's")
		}
	}
}
