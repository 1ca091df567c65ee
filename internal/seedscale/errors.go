package seedscale

import "errors"

var errNotYet = errors.New("seedscale: not implemented yet")
