package landscape

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"
)

// Positions in the file: every message about an item or a field names the
// line in the file (not in its document), found only once something is to
// be reported, so reading a good file costs nothing more.

// document is one top-level document of a file: its JSON, and its source
// with the line of the file it starts on.
type document struct {
	json json.RawMessage
	src  []byte // as written, YAML or JSON
	line int    // the file's line of src's first line, from 1
	root *yamlv3.Node
	read bool // root parsed (or found unparsable)
}

// lineOf is the file's line of the member at path (a JSON path from the
// document's root, "items[3].spec.provider.regoin": the key's line), or
// of the deepest node on the way that exists; 0 when the source does not
// parse.
func (d *document) lineOf(path string) int {
	if !d.read {
		d.read = true
		var n yamlv3.Node
		if yamlv3.Unmarshal(d.src, &n) == nil && n.Kind == yamlv3.DocumentNode && len(n.Content) == 1 {
			d.root = n.Content[0]
		}
	}
	if d.root == nil {
		return 0
	}
	at := d.root.Line
	node := d.root
	for _, seg := range pathSegments(path) {
		node = deref(node)
		next, line := child(node, seg)
		if next == nil {
			break
		}
		node, at = next, line
	}
	return d.line + at - 1
}

// child is the member seg (a key, or "[i]") of node, with the line of its
// key (of the item, for "[i]").
func child(node *yamlv3.Node, seg string) (*yamlv3.Node, int) {
	if strings.HasPrefix(seg, "[") {
		i, err := strconv.Atoi(strings.Trim(seg, "[]"))
		if err != nil || node.Kind != yamlv3.SequenceNode || i < 0 || i >= len(node.Content) {
			return nil, 0
		}
		return node.Content[i], node.Content[i].Line
	}
	if node.Kind != yamlv3.MappingNode {
		return nil, 0
	}
	for i := 0; i+1 < len(node.Content); i += 2 {
		if node.Content[i].Value == seg {
			return node.Content[i+1], node.Content[i].Line
		}
	}
	return nil, 0
}

func deref(n *yamlv3.Node) *yamlv3.Node {
	for i := 0; n.Kind == yamlv3.AliasNode && n.Alias != nil && i < maxListDepth; i++ {
		n = n.Alias
	}
	return n
}

// pathSegments splits "items[3].spec.taints[0].key" into items, [3],
// spec, taints, [0], key. A map key holding a dot is split too; lineOf
// then stops at the deepest part it finds.
func pathSegments(path string) []string {
	var out []string
	for _, part := range strings.Split(path, ".") {
		for part != "" {
			i := strings.IndexByte(part[1:], '[') + 1
			if i == 0 {
				out = append(out, part)
				break
			}
			out = append(out, part[:i])
			part = part[i:]
		}
	}
	return out
}

func joinPath(prefix, path string) string {
	if prefix == "" {
		return path
	}
	if path == "" {
		return prefix
	}
	return prefix + sep(path) + path
}

// splitDocuments returns each top-level document with its position. JSON
// input is not run through the YAML parser, which is much slower on large
// `-o json` dumps.
func splitDocuments(data []byte) ([]*document, error) {
	trimmed := bytes.TrimLeft(data, " \t\r\n\ufeff")
	if len(trimmed) == 0 {
		return nil, nil
	}
	if trimmed[0] == '{' || trimmed[0] == '[' {
		return splitJSON(data, len(data)-len(trimmed))
	}
	var docs []*document
	// src is the current document, a slice of data (from offset from, not
	// copied); nil between documents.
	n, start, line, from := 0, 0, 1, 0
	var src []byte
	flush := func() error {
		defer func() { n++ }()
		j, err := yaml.YAMLToJSON(src)
		if err != nil {
			return fmt.Errorf("document %d: invalid YAML: %s", n, fileLines(err.Error(), start))
		}
		if t := bytes.TrimSpace(j); len(t) == 0 || string(t) == "null" {
			return nil // empty document, e.g. a trailing `---` or only comments
		}
		docs = append(docs, &document{json: j, src: src, line: start})
		return nil
	}
	for off := 0; off < len(data); line++ {
		l := data[off:]
		if i := bytes.IndexByte(l, '\n'); i >= 0 {
			l = l[:i+1]
		}
		off += len(l)
		if !bytes.HasPrefix(l, []byte("---")) {
			if src == nil {
				start, from = line, off-len(l)
			}
			src = data[from:off]
			continue
		}
		// A separator may be followed by a comment only, as the YAML
		// reader of Kubernetes' decoders allows.
		if t := strings.TrimSpace(string(l[3:])); t != "" && t[0] != '#' {
			return nil, fmt.Errorf("line %d: invalid YAML document separator: %s", line, t)
		}
		if src != nil {
			if err := flush(); err != nil {
				return nil, err
			}
			src = nil
		}
	}
	if src != nil {
		if err := flush(); err != nil {
			return nil, err
		}
	}
	return docs, nil
}

func splitJSON(data []byte, offset int) ([]*document, error) {
	var docs []*document
	dec := json.NewDecoder(bytes.NewReader(data[offset:]))
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err == io.EOF {
			return docs, nil
		} else if err != nil {
			return nil, fmt.Errorf("document %d: invalid JSON: %w", len(docs), err)
		}
		// The value ends at the decoder's offset; it began len(raw)
		// bytes before (Decode keeps the value's bytes as written).
		begin := offset + int(dec.InputOffset()) - len(raw)
		docs = append(docs, &document{json: raw, src: raw, line: 1 + bytes.Count(data[:begin], []byte("\n"))})
	}
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

// fileLines turns a YAML parser's "line N" (of a document starting at the
// file's line start) into the file's line.
func fileLines(msg string, start int) string {
	return yamlLine.ReplaceAllStringFunc(msg, func(m string) string {
		n, err := strconv.Atoi(m[len("line "):])
		if err != nil {
			return m
		}
		return "line " + strconv.Itoa(n+start-1)
	})
}
