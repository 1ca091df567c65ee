package admissionjson

// A JSON reader over a stream (StreamReview): it checks the grammar as
// encoding/json's scanner does (the API server's and controller-runtime's
// decoders accept exactly what it accepts, up to the same nesting depth),
// keeps only the bytes it is told to keep, and never holds more of the
// stream than its buffer. FuzzStreamGrammar holds it to encoding/json.

import (
	"errors"
	"fmt"
	"io"
)

// maxNestingDepth is encoding/json's: deeper documents are invalid there.
const maxNestingDepth = 10000

// streamBufferBytes is how much of the stream is held at once.
const streamBufferBytes = 16 << 10

// SyntaxError is a stream that is not one JSON value, as encoding/json would
// refuse it.
type SyntaxError struct {
	Offset int64
	msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at offset %d: %s", e.Offset, e.msg)
}

// streamReader reads JSON from src. Bytes consumed while keeping are
// appended to out, up to maxOut; past it over is set and nothing more is
// kept.
type streamReader struct {
	src     io.Reader
	buf     []byte
	i, n    int   // buf[i:n] is unread
	off     int64 // stream offset of buf[0]
	readErr error // the error that ended the stream (io.EOF at its end)

	out      []byte
	maxOut   int
	over     bool
	keeping  bool
	keepFrom int // start in buf of the bytes not yet kept
}

func newStreamReader(src io.Reader, maxOut int) *streamReader {
	return &streamReader{src: src, buf: make([]byte, streamBufferBytes), maxOut: maxOut}
}

// offset is the stream offset of the next byte.
func (s *streamReader) offset() int64 { return s.off + int64(s.i) }

// fill makes sure a byte is unread; false at the end of the stream or on a
// read error (readErr).
func (s *streamReader) fill() bool {
	if s.i < s.n {
		return true
	}
	if s.keeping {
		s.emit(s.buf[s.keepFrom:s.n])
		s.keepFrom = 0
	}
	s.off += int64(s.n)
	s.i, s.n = 0, 0
	for s.readErr == nil {
		m, err := s.src.Read(s.buf)
		s.n, s.readErr = m, err
		if m > 0 {
			return true
		}
	}
	return false
}

// emit appends p to out within maxOut.
func (s *streamReader) emit(p []byte) {
	if s.over {
		return
	}
	if len(s.out)+len(p) > s.maxOut {
		s.over = true
		return
	}
	s.out = append(s.out, p...)
}

func (s *streamReader) emitString(p string) {
	if !s.over && len(s.out)+len(p) > s.maxOut {
		s.over = true
	}
	if !s.over {
		s.out = append(s.out, p...)
	}
}

func (s *streamReader) startKeep() { s.keeping, s.keepFrom = true, s.i }

func (s *streamReader) stopKeep() {
	s.emit(s.buf[s.keepFrom:s.i])
	s.keeping = false
}

// fail is the error for the stream ending or holding c at the offset.
func (s *streamReader) fail(what string) error {
	if s.i >= s.n {
		if s.readErr != nil && !errors.Is(s.readErr, io.EOF) {
			return s.readErr
		}
		return &SyntaxError{Offset: s.offset(), msg: "unexpected end of JSON input, " + what}
	}
	return &SyntaxError{Offset: s.offset(), msg: fmt.Sprintf("invalid character %q, %s", s.buf[s.i], what)}
}

// ws skips JSON whitespace.
func (s *streamReader) ws() {
	for s.fill() {
		switch s.buf[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek is the next byte after whitespace (0 at the end).
func (s *streamReader) peek() byte {
	s.ws()
	if s.fill() {
		return s.buf[s.i]
	}
	return 0
}

// expect consumes c, after whitespace.
func (s *streamReader) expect(c byte, what string) error {
	if s.peek() != c {
		return s.fail(what)
	}
	s.i++
	return nil
}

// stringChar marks the bytes a string's scan must stop at.
var stringChar = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// str reads the string at the reader (its '"' next) and appends its raw
// contents, escapes as written, to dst while they fit in max bytes; long
// reports those that did not.
func (s *streamReader) str(dst []byte, max int) (raw []byte, escaped, long bool, err error) {
	s.i++ // '"'
	for {
		if !s.fill() {
			return dst, escaped, long, s.fail("in string literal")
		}
		start := s.i
		for s.i < s.n && !stringChar[s.buf[s.i]] {
			s.i++
		}
		if chunk := s.buf[start:s.i]; !long {
			if len(dst)+len(chunk) > max {
				long = true
			} else {
				dst = append(dst, chunk...)
			}
		}
		if s.i == s.n {
			continue
		}
		switch c := s.buf[s.i]; {
		case c == '"':
			s.i++
			return dst, escaped, long, nil
		case c < 0x20:
			return dst, escaped, long, s.fail("in string literal")
		}
		// A backslash and its escape.
		escaped = true
		esc, err := s.escape()
		if err != nil {
			return dst, escaped, long, err
		}
		if !long {
			if len(dst)+len(esc) > max {
				long = true
			} else {
				dst = append(dst, esc...)
			}
		}
	}
}

// escape reads one escape sequence (the backslash next) and returns it.
func (s *streamReader) escape() ([]byte, error) {
	var seq [6]byte
	seq[0] = '\\'
	s.i++
	if !s.fill() {
		return nil, s.fail("in string escape code")
	}
	c := s.buf[s.i]
	switch c {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.i++
		seq[1] = c
		return seq[:2], nil
	case 'u':
		s.i++
		seq[1] = c
		for k := 2; k < 6; k++ {
			if !s.fill() || !isHex(s.buf[s.i]) {
				return nil, s.fail("in \\u hexadecimal character escape")
			}
			seq[k] = s.buf[s.i]
			s.i++
		}
		return seq[:], nil
	}
	return nil, s.fail("in string escape code")
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// skip reads one value at depth (the containers around it).
func (s *streamReader) skip(depth int) error {
	switch c := s.peek(); c {
	case '{':
		return s.object(depth, func(_ *streamKey) error { return s.skip(depth + 1) })
	case '[':
		return s.array(depth)
	case '"':
		_, _, _, err := s.str(nil, 0)
		return err
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	default:
		if c == '-' || '0' <= c && c <= '9' {
			return s.number()
		}
		return s.fail("looking for beginning of value")
	}
}

func (s *streamReader) literal(lit string) error {
	for k := range len(lit) {
		if !s.fill() || s.buf[s.i] != lit[k] {
			return s.fail("in literal " + lit)
		}
		s.i++
	}
	return nil
}

// number reads a number as JSON writes it: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *streamReader) number() error {
	digits := func() int {
		n := 0
		for s.fill() && '0' <= s.buf[s.i] && s.buf[s.i] <= '9' {
			s.i++
			n++
		}
		return n
	}
	if s.buf[s.i] == '-' {
		s.i++
	}
	if !s.fill() {
		return s.fail("in numeric literal")
	}
	switch c := s.buf[s.i]; {
	case c == '0':
		s.i++
	case '1' <= c && c <= '9':
		digits()
	default:
		return s.fail("in numeric literal")
	}
	if s.fill() && s.buf[s.i] == '.' {
		s.i++
		if digits() == 0 {
			return s.fail("after decimal point in numeric literal")
		}
	}
	if s.fill() && (s.buf[s.i] == 'e' || s.buf[s.i] == 'E') {
		s.i++
		if s.fill() && (s.buf[s.i] == '+' || s.buf[s.i] == '-') {
			s.i++
		}
		if digits() == 0 {
			return s.fail("in exponent of numeric literal")
		}
	}
	return nil
}

func (s *streamReader) array(depth int) error {
	if depth+1 > maxNestingDepth {
		return &SyntaxError{Offset: s.offset(), msg: "exceeded max depth"}
	}
	s.i++ // '['
	if s.peek() == ']' {
		s.i++
		return nil
	}
	for {
		if err := s.skip(depth + 1); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return nil
		default:
			return s.fail("after array element")
		}
	}
}

// streamKey is a member's key as read: its raw bytes while short.
type streamKey struct {
	raw           []byte
	escaped, long bool
	buf           [maxStreamKey]byte
}

// maxStreamKey bounds the keys compared: the longest a key seedwarden looks
// for can be written in ("requestSubResource", every letter escaped).
const maxStreamKey = 6 * len("requestSubResource")

// object reads the object at the reader (its '{' next) at depth, calling
// member with the reader at each member's value, which member must read.
func (s *streamReader) object(depth int, member func(k *streamKey) error) error {
	if depth+1 > maxNestingDepth {
		return &SyntaxError{Offset: s.offset(), msg: "exceeded max depth"}
	}
	s.i++ // '{'
	if s.peek() == '}' {
		s.i++
		return nil
	}
	var k streamKey
	for {
		if s.peek() != '"' {
			return s.fail("looking for beginning of object key string")
		}
		var err error
		k.raw, k.escaped, k.long, err = s.str(k.buf[:0], maxStreamKey)
		if err != nil {
			return err
		}
		if err := s.expect(':', "after object key"); err != nil {
			return err
		}
		s.ws()
		if err := member(&k); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return nil
		default:
			return s.fail("after object key:value pair")
		}
	}
}

// keep reads one value at depth and keeps it.
func (s *streamReader) keep(depth int) error {
	s.ws()
	s.startKeep()
	err := s.skip(depth)
	s.stopKeep()
	return err
}

// end checks that only whitespace follows the value read.
func (s *streamReader) end() error {
	s.ws()
	if s.fill() || !errors.Is(s.readErr, io.EOF) {
		return s.fail("after top-level value")
	}
	return nil
}
