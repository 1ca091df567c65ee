package main

import (
	"flag"
	"fmt"
	"io"
	"runtime"
)

// Set at build time:
//
//	go build -ldflags "-X main.version=v0.1.0 -X main.commit=$(git rev-parse HEAD)"
var (
	version = "dev"
	commit  = "dev"
)

func versionCommand(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("version", "webhook version", stderr)
	if code, done := parseFlags(fs, args); done {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "webhook version: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	fmt.Fprintf(stdout, "seedwarden webhook %s (commit %s, %s %s/%s)\n", version, commit, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return exitOK
}

func newFlagSet(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: %s\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args; done is true when the command must stop with code
// (after -h, or a bad flag).
func parseFlags(fs *flag.FlagSet, args []string) (code int, done bool) {
	switch err := fs.Parse(args); err {
	case nil:
		return exitOK, false
	case flag.ErrHelp:
		return exitOK, true
	default:
		return exitUsage, true
	}
}
