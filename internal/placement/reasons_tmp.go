package placement

// TEMPORARY until the reason codes of issue 38 item 4 land on main: the
// codes the audit uses, with the names they land under.

type ReasonCode string

const (
	SeedDeleting                 ReasonCode = "SeedDeleting"
	CloudProfileSelectorMismatch ReasonCode = "CloudProfileSelectorMismatch"
	CloudProfileSelectorInvalid  ReasonCode = "CloudProfileSelectorInvalid"
	CloudProfileNotFound         ReasonCode = "CloudProfileNotFound"
	ShootSelectorMismatch        ReasonCode = "ShootSelectorMismatch"
	ShootSelectorInvalid         ReasonCode = "ShootSelectorInvalid"
	ProviderNotEnabled           ReasonCode = "ProviderNotEnabled"
	TooFewZones                  ReasonCode = "TooFewZones"
	ControlPlaneZoneMissing      ReasonCode = "ControlPlaneZoneMissing"
	AccessRestrictionUnsupported ReasonCode = "AccessRestrictionUnsupported"
	AccessRestrictionsTooMany    ReasonCode = "AccessRestrictionsTooMany"
	TaintNotTolerated            ReasonCode = "TaintNotTolerated"
	SeedFull                     ReasonCode = "SeedFull"
	SeedNotFound                 ReasonCode = "SeedNotFound"
)

func cloudProfileCode(error) ReasonCode { return CloudProfileNotFound }
