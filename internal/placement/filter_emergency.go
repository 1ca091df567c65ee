package placement

import "github.com/seedwarden/seedwarden/internal/api"

// filterEmergencyStop is step 9: a seed whose reconciliations are stopped by
// the emergency annotation takes no new Shoots.
func (d *decider) filterEmergencyStop(seeds []*Seed) ([]*Seed, Decision) {
	kept := d.filterBy(seeds, notEmergencyStopped)
	if len(kept) == 0 {
		return nil, d.fail(StepEmergencyStop, "", "all of the %d seeds have reconciliations stopped by emergency annotation %s", len(seeds), api.AnnotationEmergencyStop)
	}
	return kept, Decision{}
}

func notEmergencyStopped(s *Seed) (ReasonCode, string) {
	if s.emergencyStop {
		return EmergencyStopped, "reconciliations stopped by emergency annotation"
	}
	return "", ""
}
