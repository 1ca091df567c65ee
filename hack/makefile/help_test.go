package makefile

import (
	"bufio"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// documentedTargets are the Makefile's targets with a "## text" comment,
// which `make help` must list.
func documentedTargets(t *testing.T) []string {
	f, err := os.Open("../../Makefile")
	require.NoError(t, err)
	defer f.Close()
	re := regexp.MustCompile(`^([a-z0-9-]+):.*## `)
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			out = append(out, m[1])
		}
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, out)
	return out
}

// `make help` lists every documented target once, in a name column and a
// text column that line up, wrapped to the terminal's width.
func TestMakeHelpLayout(t *testing.T) {
	targets := documentedTargets(t)
	width := 0
	for _, name := range targets {
		width = max(width, len(name))
	}
	textColumn := 2 + width + 2
	for _, cols := range []int{80, 100, 140} {
		t.Run(strconv.Itoa(cols), func(t *testing.T) {
			cmd := exec.Command("make", "-s", "--no-print-directory", "-C", "../..", "help")
			cmd.Env = append(os.Environ(), "COLUMNS="+strconv.Itoa(cols))
			out, err := cmd.Output()
			require.NoError(t, err)
			lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
			var listed []string
			for _, line := range lines {
				assert.LessOrEqual(t, len(line), cols, "wider than the terminal: %q", line)
				require.Greater(t, len(line), textColumn, "no text: %q", line)
				assert.Equal(t, "  ", line[:2], line)
				if name := strings.TrimSpace(line[:textColumn]); name != "" {
					listed = append(listed, name)
				}
				assert.NotEqual(t, ' ', rune(line[textColumn]), "text does not start at column %d: %q", textColumn, line)
				assert.Equal(t, ' ', rune(line[textColumn-1]), "name runs into the text: %q", line)
			}
			assert.Equal(t, targets, listed)
		})
	}
}
