package main

import (
	"fmt"
	"path/filepath"
	"strings"
)

// kubectl (1.26 and later) completes `kubectl seedwarden …` by running
// kubectl_complete-seedwarden with the words after the plugin's name, the
// last one being completed, and reads cobra's protocol: one candidate a
// line (TAB, then a description), then ":DIRECTIVE". The binary answers so
// when invoked by that name (a symlink), from the same command table as the
// shell scripts.

// completePrefix starts the name kubectl runs to complete a plugin.
const completePrefix = "kubectl_complete-"

// Cobra's completion directives.
const (
	directiveDefault    = 0 // the shell's default: file names
	directiveNoFileComp = 4
)

// kubectlCompleteName is the plugin's name ("kubectl seedwarden") when arg0
// is its completion name; ok is false otherwise.
func kubectlCompleteName(arg0 string) (prog string, ok bool) {
	rest, ok := strings.CutPrefix(filepath.Base(arg0), completePrefix)
	if !ok || rest == "" {
		return "", false
	}
	return programName(pluginPrefix + rest), true
}

// kubectlComplete writes the candidates for the last of words.
func kubectlComplete(c *cli, words []string) int {
	cands, directive := candidates(completionSpecFor(c), words)
	var b strings.Builder
	for _, cand := range cands {
		b.WriteString(cand + "\n")
	}
	fmt.Fprintf(&b, ":%d\n", directive)
	return c.write(b.String())
}

// candidates completes the last of words (the words after the program's
// name): a command, a command's flag, its first argument's values, or
// (directiveDefault) a file name.
func candidates(s completionSpec, words []string) ([]string, int) {
	if len(words) == 0 {
		words = []string{""}
	}
	cur := words[len(words)-1]
	var out []string
	match := func(name, description string) {
		switch {
		case !strings.HasPrefix(name, cur):
		case description == "":
			out = append(out, name)
		default:
			out = append(out, name+"\t"+shortUsage(description))
		}
	}
	if len(words) == 1 && !strings.HasPrefix(cur, "-") {
		for _, cmd := range s.commands {
			for _, n := range cmd.names {
				match(n, cmd.summary)
			}
		}
		return out, directiveNoFileComp
	}
	name := s.defaultCmd
	if !strings.HasPrefix(words[0], "-") {
		name = words[0]
	}
	cmd, ok := s.command(name)
	if !ok {
		return nil, directiveNoFileComp
	}
	if len(words) > 1 {
		if f, ok := cmd.flag(words[len(words)-2]); ok && f.value {
			return nil, directiveDefault
		}
	}
	switch {
	case strings.HasPrefix(cur, "-"):
		for _, f := range cmd.flags {
			match(f.name, f.usage)
		}
	case len(cmd.words) > 0 && len(words) == 2:
		for _, w := range cmd.words {
			match(w, "")
		}
	default:
		return nil, directiveDefault
	}
	return out, directiveNoFileComp
}

func (s completionSpec) command(name string) (completionCommandSpec, bool) {
	for _, cmd := range s.commands {
		for _, n := range cmd.names {
			if n == name {
				return cmd, true
			}
		}
	}
	return completionCommandSpec{}, false
}

// flag finds a flag as typed, with one dash or two.
func (cmd completionCommandSpec) flag(word string) (completionFlag, bool) {
	name := strings.TrimLeft(word, "-")
	for _, f := range cmd.flags {
		if strings.TrimLeft(f.name, "-") == name && name != "" && strings.HasPrefix(word, "-") {
			return f, true
		}
	}
	return completionFlag{}, false
}
