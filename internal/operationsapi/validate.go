package operationsapi

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Validate checks what the CRD's schema checks, for a SeedDrain read from
// somewhere the schema did not hold (a file, a fake client); the error
// names each field and its value.
func (s *SeedDrainSpec) Validate() error {
	var errs []error
	if s.SeedName == "" {
		errs = append(errs, errors.New("spec.seedName: empty: name the seed to drain"))
	} else if msgs := validation.IsDNS1123Subdomain(s.SeedName); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("spec.seedName=%q: %s", s.SeedName, msgs[0]))
	}
	if v := s.Budget.MaxInFlight; v != nil && (*v < 1 || *v > MaxInFlightLimit) {
		errs = append(errs, fmt.Errorf("spec.budget.maxInFlight=%d: want 1 to %d", *v, MaxInFlightLimit))
	}
	if v := s.Budget.MaxPerHour; v != nil && (*v < 1 || *v > MaxPerHourLimit) {
		errs = append(errs, fmt.Errorf("spec.budget.maxPerHour=%d: want 1 to %d", *v, MaxPerHourLimit))
	}
	return errors.Join(errs...)
}
