// Command decide decides placement scenarios with Gardener's own scheduler:
// for each scenario (the conformance corpus's JSON format) it loads the
// landscape into controller-runtime's fake client and calls the scheduler's
// Reconciler.DetermineSeed, and writes Gardener's decision as one JSON line.
//
// Built twice (hack/gardener-bins.sh): decide links Gardener as it is (network
// rule AllowIPv4), decide-disjoint the same code without the IPv4 exemption
// (Disjoint). Each refuses scenarios of the other rule. See ../../README.md.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

// Exit codes.
const (
	exitDone  = 0 // every input read; problems with single scenarios are lines
	exitInput = 1 // an input is not a stream of JSON values, or output failed
	exitUsage = 2 // bad flags or an input file that cannot be opened
)

// line is one output line: exactly one of Expect, Error, Panic is set.
// Undefined may come with Expect: Gardener's answer then depends on the order
// its cache lists objects in, and Expect is the answer for name order.
type line struct {
	Name      string  `json:"name"`
	Expect    *expect `json:"expect,omitempty"`
	Undefined string  `json:"undefined,omitempty"`
	Error     string  `json:"error,omitempty"`
	Panic     string  `json:"panic,omitempty"`
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	prog := "decide"
	own := linkedOverlapRule()
	if own == overlapDisjoint {
		prog = "decide-disjoint"
	}
	flags := flag.NewFlagSet(prog, flag.ContinueOnError)
	flags.SetOutput(stderr)
	printRule := flags.Bool("network-overlap", false, "print the network rule this binary decides ("+overlapAllowIPv4+" or "+overlapDisjoint+") and exit")
	flags.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s [-network-overlap] [scenario.json ...]\n\n"+
			"Decides each scenario (corpus JSON objects, read from the files or else from stdin)\n"+
			"with Gardener's scheduler under network rule %s and writes one JSON line per scenario:\n"+
			"  {\"name\":N,\"expect\":{\"seed\":S,\"tied\":[...]}}\n"+
			"  {\"name\":N,\"expect\":{\"unschedulable\":true,\"referenceError\":E}}\n"+
			"  either may carry \"undefined\":U when the answer depends on list order (expect: name order)\n"+
			"  {\"name\":N,\"error\":E}   the scenario could not be decided\n"+
			"  {\"name\":N,\"panic\":P}   Gardener's scheduler panicked\n"+
			"Exit: 0 all input read, 1 input not JSON or output failed, 2 usage.\n\n", prog, own)
		flags.PrintDefaults()
	}
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitDone
		}
		return exitUsage
	}
	if *printRule {
		fmt.Fprintln(stdout, own)
		return exitDone
	}

	inputs, closeAll, err := openInputs(flags.Args(), stdin)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return exitUsage
	}
	defer closeAll()

	out := bufio.NewWriter(stdout)
	d := decider{own: own, out: out, stderr: stderr, prog: prog}
	for _, in := range inputs {
		if err := d.stream(in.name, in.r); err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", prog, err)
			return exitInput
		}
	}
	return exitDone
}

type input struct {
	name string
	r    io.Reader
}

// openInputs opens every file before anything is decided, so a wrong path is
// a usage error with no output.
func openInputs(paths []string, stdin io.Reader) ([]input, func(), error) {
	if len(paths) == 0 {
		return []input{{name: "stdin", r: stdin}}, func() {}, nil
	}
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			_ = f.Close()
		}
	}
	inputs := make([]input, 0, len(paths))
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		files = append(files, f)
		inputs = append(inputs, input{name: p, r: f})
	}
	return inputs, closeAll, nil
}

type decider struct {
	own    string
	out    *bufio.Writer
	stderr io.Writer
	prog   string
}

// stream decides every JSON value of one input, writing and flushing a line
// each, so a caller may feed scenarios one at a time through a pipe.
func (d decider) stream(source string, r io.Reader) error {
	dec := json.NewDecoder(bufio.NewReader(r))
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("%s: not a stream of JSON values: %w", source, err)
		}
		if err := d.write(d.one(raw)); err != nil {
			return fmt.Errorf("writing the decision: %w", err)
		}
	}
}

func (d decider) one(raw []byte) line {
	s, err := parseScenario(raw)
	if err != nil {
		return line{Name: nameOf(raw), Error: err.Error()}
	}
	l, err := decodeLandscape(s, d.own)
	if err != nil {
		return line{Name: s.Name, Error: err.Error()}
	}
	e, undefined, err := decide(context.Background(), l)
	var p *gardenerPanic
	switch {
	case errors.As(err, &p):
		fmt.Fprintf(d.stderr, "%s: scenario %q: Gardener's scheduler panicked: %v\n%s\n", d.prog, s.Name, p.value, p.stack)
		return line{Name: s.Name, Panic: p.Error()}
	case err != nil:
		return line{Name: s.Name, Error: err.Error()}
	}
	return line{Name: s.Name, Expect: &e, Undefined: undefined}
}

func (d decider) write(l line) error {
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	if _, err := d.out.Write(append(b, '\n')); err != nil {
		return err
	}
	return d.out.Flush()
}
