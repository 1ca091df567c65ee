package admissionjson

import (
	"bytes"
	"errors"

	"github.com/seedwarden/seedwarden/internal/objsize"
)

// MeasuredObject is what the resource-size webhook reads of a request's
// object: its length, its sizes as objsize counts them, and its name for
// messages. RawObject reads them from the object's bytes; StreamReview
// records them as the object streams past (ObjectMeasure), with the same
// results.
type MeasuredObject interface {
	// Len is the length of the object's JSON.
	Len() int64
	// IsObject reports whether the JSON is an object ('{' to '}').
	IsObject() bool
	// Sizes are objsize.MeasureSizes of the object, error and all.
	Sizes() (objsize.Sizes, error)
	// Name is DecodeObjectName of the object, error and all.
	Name() (name, generateName string, err error)
}

// RawObject is raw (request.object or oldObject as sent) as a MeasuredObject.
func RawObject(raw []byte) MeasuredObject { return rawObject(raw) }

type rawObject []byte

func (r rawObject) Len() int64 { return int64(len(r)) }

func (r rawObject) IsObject() bool {
	t := bytes.TrimSpace(r)
	return len(t) >= 2 && t[0] == '{' && t[len(t)-1] == '}'
}

func (r rawObject) Sizes() (objsize.Sizes, error) { return objsize.MeasureSizes(r) }
func (r rawObject) Name() (string, string, error) { return DecodeObjectName(r) }
func (m *ObjectMeasure) Len() int64               { return m.lengths.Object }
func (m *ObjectMeasure) IsObject() bool           { return m.object }

// Name implements MeasuredObject.
func (m *ObjectMeasure) Name() (string, string, error) {
	if m.nameErr != nil {
		return "", "", m.nameErr
	}
	return m.name, m.generateName, nil
}

// ObjectMeasure is an object measured as it streamed past: what
// objsize.MeasureSizes and DecodeObjectName read of it, recorded as their
// decoders would (exact keys, the last of duplicates winning, a literal null
// leaving a field as it was, duplicate "metadata" members merging), with
// none of its other bytes held.
type ObjectMeasure struct {
	lengths objsize.Lengths
	object  bool
	// typeErr is, for the first value objsize's envelope cannot take (the
	// object itself, or metadata, being no object), a JSON value of the same
	// type: measuring it gives the same error.
	typeErr           string
	typeErrInMetadata bool
	name              string
	generateName      string
	nameErr           error
}

// Sizes implements MeasuredObject.
func (m *ObjectMeasure) Sizes() (objsize.Sizes, error) {
	if m.typeErr == "" {
		return m.lengths.Sizes(), nil
	}
	doc := m.typeErr
	if m.typeErrInMetadata {
		doc = `{"metadata":` + doc + `}`
	}
	_, err := objsize.MeasureSizes([]byte(doc))
	return objsize.Sizes{}, err
}

// maxStreamedName bounds the names an ObjectMeasure keeps; a longer one
// (the API server allows 253 bytes) is not kept, and Name reports an error,
// as for a name that does not decode.
const maxStreamedName = 1 << 10

var errStreamedName = errors.New("seedwarden: object name not kept: not a string, or longer than 1 KiB")

// measure reads the value at depth (the request's object or oldObject).
func (s *streamReader) measure(depth int) (*ObjectMeasure, error) {
	m := &ObjectMeasure{}
	c := s.peek()
	start := s.offset()
	var err error
	if c == '{' {
		m.object = true
		err = s.object(depth, func(k *streamKey) error {
			switch {
			case k.is("status"):
				v, err := s.valueLength(depth + 1)
				m.lengths.Status = v
				return err
			case k.is("metadata"):
				return s.measureMetadata(m, depth+1)
			}
			return s.skip(depth + 1)
		})
	} else {
		m.typeErr, m.nameErr = sameType(c), errStreamedName
		err = s.skip(depth)
	}
	m.lengths.Object = s.offset() - start
	return m, err
}

func (s *streamReader) measureMetadata(m *ObjectMeasure, depth int) error {
	switch c := s.peek(); c {
	case '{':
		return s.object(depth, func(k *streamKey) error {
			switch {
			case k.is("managedFields"):
				v, err := s.valueLength(depth + 1)
				m.lengths.ManagedFields = v
				return err
			case k.is("name"):
				return s.measureName(m, &m.name, depth+1)
			case k.is("generateName"):
				return s.measureName(m, &m.generateName, depth+1)
			}
			return s.skip(depth + 1)
		})
	case 'n': // null: the struct keeps what it had
		return s.skip(depth)
	default:
		if m.typeErr == "" {
			m.typeErr, m.typeErrInMetadata = sameType(c), true
		}
		m.nameErr = errStreamedName
		return s.skip(depth)
	}
}

func (s *streamReader) measureName(m *ObjectMeasure, into *string, depth int) error {
	switch s.peek() {
	case '"':
		raw, _, long, err := s.str(nil, maxStreamedName)
		if err != nil {
			return err
		}
		var v string
		if long || unmarshal(append(append([]byte{'"'}, raw...), '"'), &v) != nil {
			m.nameErr = errStreamedName
		}
		*into = v
		return nil
	case 'n':
		return s.skip(depth)
	default:
		m.nameErr = errStreamedName
		return s.skip(depth)
	}
}

// valueLength reads one value and returns what objsize reads of it.
func (s *streamReader) valueLength(depth int) (objsize.Value, error) {
	c := s.peek()
	start := s.offset()
	err := s.skip(depth)
	return objsize.Value{Set: true, Null: c == 'n', Len: s.offset() - start}, err
}

// sameType is a JSON value of the type of the value starting with c.
func sameType(c byte) string {
	switch c {
	case '"':
		return `""`
	case '[':
		return `[]`
	case 't', 'f':
		return `false`
	}
	return `0`
}
