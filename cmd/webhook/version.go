package main

import (
	"fmt"
	"runtime"
)

// Set at build time:
//
//	go build -ldflags "-X main.version=v0.1.0 -X main.commit=$(git rev-parse HEAD)"
var (
	version = "dev"
	commit  = "dev"
)

// versionCommand is `version` and `--version`.
func versionCommand(c *cli, args []string) int {
	if len(args) > 0 {
		fmt.Fprintf(c.stderr, "%s version: unexpected argument %q\n", c.prog, args[0])
		return exitUsage
	}
	return c.write(fmt.Sprintf("seedwarden webhook %s (commit %s, %s %s/%s)\n", version, commit, runtime.Version(), runtime.GOOS, runtime.GOARCH))
}
