package seedreserve

import (
	"errors"
	"time"

	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/metrics"
)

// Recorder is what the Reserver records; *metrics.Recorder implements it
// (registered with metrics.GroupReservations).
type Recorder interface {
	ObserveReservation(operation, result string, d time.Duration)
	ObserveReservationConflict()
	ObserveReservationBatch(n int)
	ObserveReservationRefused(store, reason string)
}

// Operations, the "operation" label of the reservation duration.
const (
	opReserve = metrics.OperationReserve
	opCheck   = metrics.OperationCheck
)

// recorder records through m, if any.
type recorder struct{ m Recorder }

// observe records one reservation or check: result ok, full (the seed has
// no place: a cache.CapacityError) or error.
func (r recorder) observe(op string, err error, d time.Duration) {
	if r.m == nil {
		return
	}
	r.m.ObserveReservation(op, resultOf(err), d)
}

func resultOf(err error) string {
	var full *cache.CapacityError
	switch {
	case errors.As(err, &full):
		return metrics.ReservationFull
	case err != nil:
		return metrics.ReservationError
	}
	return metrics.ReservationOK
}

func (r recorder) conflict() {
	if r.m != nil {
		r.m.ObserveReservationConflict()
	}
}

func (r recorder) observeBatch(n int) {
	if r.m != nil {
		r.m.ObserveReservationBatch(n)
	}
}

// refused counts a reservation the limits refused (err, a *cache.LimitError).
func (r recorder) refused(err error) {
	var limit *cache.LimitError
	if r.m != nil && errors.As(err, &limit) {
		r.m.ObserveReservationRefused(metrics.RefusedStoreAPIServer, limit.Reason)
	}
}
