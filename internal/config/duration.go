package config

import (
	"encoding/json"
	"strconv"
	"time"
)

// Duration is a duration written as a Go duration string ("30s", "1m30s").
// A value that does not parse is kept and reported by Validate with its field
// path, like every other problem, instead of aborting the decoding.
type Duration struct {
	time.Duration

	set     bool   // the field was given (or defaulted)
	invalid string // the value as written (quoted if a string), when it did not parse
}

// NewDuration returns a set Duration.
func NewDuration(d time.Duration) Duration { return Duration{Duration: d, set: true} }

// UnmarshalJSON implements json.Unmarshaler.
// null and "" leave the field unset, so that it is defaulted.
func (d *Duration) UnmarshalJSON(b []byte) error {
	*d = Duration{}
	if string(b) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		d.set, d.invalid = true, string(b)
		return nil
	}
	if s == "" {
		return nil
	}
	d.set = true
	v, err := time.ParseDuration(s)
	if err != nil {
		d.invalid = strconv.Quote(s)
		return nil
	}
	d.Duration = v
	return nil
}

// MarshalJSON implements json.Marshaler.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(d.String())
}

func (d Duration) validate(p *problems, path string, limit time.Duration) {
	switch {
	case d.invalid != "":
		p.add(path, "invalid value %s (want a duration such as \"30s\")", d.invalid)
	case d.Duration <= 0:
		p.add(path, "%s must be positive", d.Duration)
	case d.Duration > limit:
		p.add(path, "%s is longer than the maximum %s", d.Duration, limit)
	}
}

func validateDurationRange(p *problems, path string, d Duration, lowest, highest time.Duration) {
	switch {
	case d.invalid != "":
		p.add(path, "invalid value %s (want a duration such as \"30s\")", d.invalid)
	case d.Duration < lowest:
		p.add(path, "%s is shorter than the minimum %s", d.Duration, lowest)
	case d.Duration > highest:
		p.add(path, "%s is longer than the maximum %s", d.Duration, highest)
	}
}
