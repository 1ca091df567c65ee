package main

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/landscape"
)

// testOptions are the flags of `webhook test`.
type testOptions struct {
	fs                            *pflag.FlagSet
	kubeconfig, configPath, junit *string
}

func testFlags(fs *pflag.FlagSet) *testOptions {
	return &testOptions{
		fs:         fs,
		kubeconfig: fs.String("kubeconfig", "", "instead of the suite's landscape: the landscape of the cluster of kubeconfig `PATH`, listed once (current context; \"\" is $KUBECONFIG, in-cluster or ~/.kube/config)"),
		configPath: fs.String("config", "", "configuration `FILE` instead of the suite's config"),
		junit:      fs.String("junit", "", "also write the results as JUnit XML to `FILE`, for CI systems"),
	}
}

// testCommand runs each suite and prints a table of its cases: exit code 0
// when every case passes, 1 when one fails, 2 on bad input.
func testCommand(ctx context.Context, c *cli, cmd *cobra.Command, o *testOptions, args []string) int {
	fail := func(err error) int {
		fmt.Fprintf(c.stderr, "%s test: %v\n", c.prog, err)
		return exitUsage
	}
	if len(args) == 0 {
		fmt.Fprintf(c.stderr, "%s test: name a suite FILE\n", c.prog)
		c.printSynopsis(cmd)
		return exitUsage
	}
	var all []suiteResults
	for _, path := range args {
		res, err := runSuite(ctx, path, o)
		if err != nil {
			return fail(err)
		}
		all = append(all, res)
	}
	failed := writeTable(c.stdout, all)
	if *o.junit != "" {
		if err := writeJUnit(*o.junit, all); err != nil {
			// Output that cannot be written is exit code 1 (docs/cli.md,
			// Exit codes), not bad input: the cases were decided.
			fmt.Fprintf(c.stderr, "%s test: --junit %q: %v\n", c.prog, *o.junit, err)
			return exitError
		}
	}
	if failed > 0 {
		return exitError
	}
	return exitOK
}

// suiteResults are the results of one suite file.
type suiteResults struct {
	path    string
	results []caseResult
}

// runSuite reads the suite, its configuration and landscape, and decides
// its cases; every error is bad input, named by field or flag.
func runSuite(ctx context.Context, path string, o *testOptions) (suiteResults, error) {
	ls, err := readSuite(path)
	if err != nil {
		return suiteResults{}, err
	}
	cfgPath := ls.rel(ls.suite.Config)
	if o.fs.Changed("config") {
		cfgPath = *o.configPath
	}
	cfg, err := loadConfig(cfgPath)
	if err != nil {
		return suiteResults{}, err
	}
	live := o.fs.Changed("kubeconfig")
	var objs []client.Object
	switch {
	case live:
		objs, err = liveLandscape(ctx, *o.kubeconfig, cfg.GardenNamespace)
	case ls.suite.Landscape == "":
		return suiteResults{}, &suiteError{ls.at.of(nil, "landscape") + ": landscape: no landscape: name a file, or give --kubeconfig PATH"}
	default:
		file := ls.rel(ls.suite.Landscape)
		if objs, err = landscape.ReadFile(file, warnLandscape); err != nil {
			err = fmt.Errorf("%s: landscape %q: %w", ls.at.of(nil, "landscape"), ls.suite.Landscape, err)
		}
	}
	if err != nil {
		return suiteResults{}, err
	}
	run := &suiteRun{ctx: ctx, cfg: cfg, objs: objs, ls: ls}
	if live {
		run.kubeconfig = o.kubeconfig
	}
	results, err := run.run()
	return suiteResults{path: path, results: results}, err
}

// writeTable prints each suite's cases, PASS or FAIL, and for a failed case
// what was expected and what the webhook decided; it returns the failures.
func writeTable(w io.Writer, all []suiteResults) int {
	failed, total := 0, 0
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SUITE\tCASE\tKIND\tRESULT")
	var diffs strings.Builder
	for _, s := range all {
		for _, r := range s.results {
			total++
			verdict := "PASS"
			if !r.Passed {
				verdict = "FAIL"
				failed++
				fmt.Fprintf(&diffs, "\n--- FAIL: %s (%s)\n%s\n", r.Name, s.path, indent(r.diff(), "    "))
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", filepath.Base(s.path), r.Name, r.Kind, verdict)
		}
	}
	_ = tw.Flush()
	fmt.Fprint(w, diffs.String())
	fmt.Fprintf(w, "\n%d of %d cases passed\n", total-failed, total)
	return failed
}

// diff is a failed case's expected and actual outcome and why, as the
// table and the JUnit failure print it.
func (r caseResult) diff() string {
	text := fmt.Sprintf("expected: %s\nactual:   %s", r.Expected, r.Actual)
	if r.Detail != "" {
		text += "\nwhy:      " + r.Detail
	}
	return text
}

// indent puts prefix before every line of s.
func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

// JUnit XML, as CI systems read it (one testsuite per suite file).
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// writeJUnit writes the results to path, whole or not at all.
func writeJUnit(path string, all []suiteResults) error {
	doc := junitSuites{}
	for _, s := range all {
		js := junitSuite{Name: s.path, Tests: len(s.results)}
		for _, r := range s.results {
			jc := junitCase{Name: r.Name, Classname: r.Kind}
			if !r.Passed {
				js.Failures++
				jc.Failure = &junitFailure{Message: fmt.Sprintf("expected %s, got %s", r.Expected, r.Actual), Type: "mismatch", Text: r.diff()}
			}
			js.Cases = append(js.Cases, jc)
		}
		doc.Tests += js.Tests
		doc.Failures += js.Failures
		doc.Suites = append(doc.Suites, js)
	}
	data, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".junit-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(append([]byte(xml.Header), append(data, '\n')...))
	if err := errors.Join(werr, tmp.Close()); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	return nil
}
