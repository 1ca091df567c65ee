package admissionjson

import (
	"errors"
	"unicode/utf8"

	authenticationv1 "k8s.io/api/authentication/v1"
)

// userInfo is authenticationv1.UserInfo as the reviews are decoded:
// userInfo.extra at its final size (extraValues). into copies it into the
// request's.
type userInfo struct {
	Username string      `json:"username,omitempty"`
	UID      string      `json:"uid,omitempty"`
	Groups   []string    `json:"groups,omitempty"`
	Extra    extraValues `json:"extra,omitempty"`
}

func (u *userInfo) into(out *authenticationv1.UserInfo) {
	*out = authenticationv1.UserInfo{Username: u.Username, UID: u.UID, Groups: u.Groups, Extra: map[string]authenticationv1.ExtraValue(u.Extra)}
}

// extraValues is userInfo.extra, each value a slice of its final size: the
// decoder would grow each from nothing (presize cannot size a map's values).
type extraValues map[string]authenticationv1.ExtraValue

var errNotStrings = errors.New("seedwarden: userInfo.extra is not an object of string arrays")

// UnmarshalJSON decodes raw (JSON the decoder has accepted) as the decoder
// decodes into a map[string][]string: null clears it, members are added to
// what it holds, the last of duplicates wins. Anything but an object of
// arrays of strings (or nulls) is an error, which makes DecodeReview and
// DecodeShootReview leave the review to webhook.Admission.
func (m *extraValues) UnmarshalJSON(raw []byte) error {
	w := walker{b: raw}
	if w.peek() == 'n' {
		*m = nil
		return nil
	}
	n, ok := count(w, '{')
	if !ok {
		return errNotStrings
	}
	if *m == nil {
		*m = make(extraValues, n)
	}
	var keys pruner
	ok = w.object(func(rawKey []byte, escaped bool) bool {
		key, ok := keys.key(rawKey, escaped)
		if !ok {
			return false
		}
		start := w.i
		if !w.skip() {
			return false
		}
		v, ok := stringArray(raw[start:w.i])
		if ok {
			(*m)[string(key)] = v
		}
		return ok
	})
	if !ok {
		return errNotStrings
	}
	return nil
}

// stringArray decodes a JSON array of strings (or null) into a slice of its
// length, as the decoder would.
func stringArray(raw []byte) (authenticationv1.ExtraValue, bool) {
	w := walker{b: raw}
	if w.peek() == 'n' {
		return nil, true
	}
	n, ok := count(w, '[')
	if !ok {
		return nil, false
	}
	out := make(authenticationv1.ExtraValue, 0, n)
	w.i++ // '['
	for w.peek() != ']' {
		if w.peek() == ',' {
			w.i++
		}
		if w.peek() != '"' {
			return nil, false
		}
		s, escaped, ok := w.str()
		if !ok {
			return nil, false
		}
		if escaped || !utf8.Valid(s) {
			// The decoder's own unquoting, for the whole array.
			out = out[:0]
			return out, unmarshal(raw, &out) == nil
		}
		out = append(out, string(s))
	}
	return out, true
}
