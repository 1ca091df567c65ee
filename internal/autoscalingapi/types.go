package autoscalingapi

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// SeedAutoscaler keeps a ManagedSeedSet's replicas where its metrics want
// them: GEP-13's Resource metric on the shoots resource, and seedwarden's
// Headroom metric, decided with the placement rules.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName=sas
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Target",type=string,JSONPath=`.spec.scaleTargetRef.name`
// +kubebuilder:printcolumn:name="Min",type=integer,JSONPath=`.spec.minReplicas`
// +kubebuilder:printcolumn:name="Max",type=integer,JSONPath=`.spec.maxReplicas`
// +kubebuilder:printcolumn:name="Current",type=integer,JSONPath=`.status.currentReplicas`
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=`.status.desiredReplicas`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type SeedAutoscaler struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   SeedAutoscalerSpec   `json:"spec"`
	Status SeedAutoscalerStatus `json:"status,omitempty"`
}

// SeedAutoscalerList is a list of SeedAutoscalers.
//
// +kubebuilder:object:root=true
type SeedAutoscalerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SeedAutoscaler `json:"items"`
}

// SeedAutoscalerSpec is what the operator asks for.
//
// +kubebuilder:validation:XValidation:rule="!has(self.minReplicas) || self.minReplicas <= self.maxReplicas",message="minReplicas must not exceed maxReplicas"
type SeedAutoscalerSpec struct {
	// ScaleTargetRef names the ManagedSeedSet to scale, in the
	// SeedAutoscaler's namespace.
	ScaleTargetRef CrossVersionObjectReference `json:"scaleTargetRef"`
	// MinReplicas is the least number of replicas. Default 1.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinReplicas *int32 `json:"minReplicas,omitempty"`
	// MaxReplicas is the most (at most 1000).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	MaxReplicas int32 `json:"maxReplicas"`
	// Metrics are the targets; the largest number of replicas any of them
	// asks for wins, as with a HorizontalPodAutoscaler.
	// At most 16 (MaxMetrics).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	Metrics []MetricSpec `json:"metrics"`
	// Behavior bounds how fast the replicas change.
	// +optional
	Behavior *Behavior `json:"behavior,omitempty"`
	// DryRun computes and reports (status, events, metrics) without
	// writing the scale subresource.
	// +optional
	DryRun bool `json:"dryRun,omitempty"`
	// ProvisioningTimeout is how long a replica asked for, or registered
	// and not ready, counts as room for Shoots: past it the replica stops
	// counting, the status says ReplicasNotReady and a warning follows.
	// Default 30m (DefaultProvisioningTimeout), of the order of a seed's
	// creation; at least 1m.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Format=duration
	// +optional
	ProvisioningTimeout *metav1.Duration `json:"provisioningTimeout,omitempty"`
	// Priority orders the sets that could take the same pending Shoots,
	// after the expander's rule (the set whose new seed takes the most of
	// them first): higher first. Default 0.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +optional
	Priority int32 `json:"priority,omitempty"`
}

// DefaultProvisioningTimeout is spec.provisioningTimeout when it is not
// set: a seed's creation (a Shoot for it, then its gardenlet) takes of the
// order of 10 to 20 minutes.
const DefaultProvisioningTimeout = 30 * time.Minute

// MinProvisioningTimeout bounds spec.provisioningTimeout from below: less
// than a seed's shortest creation would call every new replica late.
const MinProvisioningTimeout = time.Minute

// ProvisioningTimeoutOrDefault is spec.provisioningTimeout, at least
// MinProvisioningTimeout, or DefaultProvisioningTimeout.
func (s *SeedAutoscalerSpec) ProvisioningTimeoutOrDefault() time.Duration {
	if s.ProvisioningTimeout == nil {
		return DefaultProvisioningTimeout
	}
	return max(s.ProvisioningTimeout.Duration, MinProvisioningTimeout)
}

// DefaultMinReplicas is spec.minReplicas when it is not set.
const DefaultMinReplicas int32 = 1

// MaxReplicasLimit bounds spec.maxReplicas (the CRD's maximum says the
// same): each replica count the recommendation tries is a simulation with
// that many seeds, and a thousand seeds in one set is beyond any garden.
const MaxReplicasLimit int32 = 1000

// MinReplicasOrDefault is spec.minReplicas, or DefaultMinReplicas.
func (s *SeedAutoscalerSpec) MinReplicasOrDefault() int32 {
	if s.MinReplicas == nil {
		return DefaultMinReplicas
	}
	return *s.MinReplicas
}

// CrossVersionObjectReference names the scaled resource.
type CrossVersionObjectReference struct {
	// APIVersion is seedmanagement.gardener.cloud/v1alpha1.
	// +kubebuilder:validation:Enum=seedmanagement.gardener.cloud/v1alpha1
	APIVersion string `json:"apiVersion"`
	// Kind is ManagedSeedSet.
	// +kubebuilder:validation:Enum=ManagedSeedSet
	Kind string `json:"kind"`
	// Name is the ManagedSeedSet's name.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// MetricSourceType is a metric's kind.
// +kubebuilder:validation:Enum=Resource;Headroom
type MetricSourceType string

// The metric types: GEP-13's Resource, and seedwarden's Headroom.
const (
	ResourceMetricSourceType MetricSourceType = "Resource"
	HeadroomMetricSourceType MetricSourceType = "Headroom"
)

// MetricSpec is one target. Exactly the field named by Type is set.
//
// +kubebuilder:validation:XValidation:rule="self.type == 'Resource' ? has(self.resource) && !has(self.headroom) : has(self.headroom) && !has(self.resource)",message="set exactly the field named by type"
type MetricSpec struct {
	Type MetricSourceType `json:"type"`
	// +optional
	Resource *ResourceMetricSource `json:"resource,omitempty"`
	// +optional
	Headroom *HeadroomMetricSource `json:"headroom,omitempty"`
}

// ResourceShoots is the only resource GEP-13 names: Shoots charged to a
// seed, against its status.allocatable.shoots.
const ResourceShoots = "shoots"

// ResourceMetricSource is GEP-13's metric: the average use of a Seed
// resource over the set's seeds.
type ResourceMetricSource struct {
	// Name is the resource; only "shoots".
	// +kubebuilder:validation:Enum=shoots
	Name string `json:"name"`
	// Target is the average to keep.
	Target MetricTarget `json:"target"`
}

// MetricTargetType says how a Resource target is given.
// +kubebuilder:validation:Enum=Utilization;AverageValue
type MetricTargetType string

// The target types of GEP-13.
const (
	UtilizationMetricType  MetricTargetType = "Utilization"
	AverageValueMetricType MetricTargetType = "AverageValue"
)

// MetricTarget is a Resource metric's target.
//
// +kubebuilder:validation:XValidation:rule="self.type == 'Utilization' ? has(self.averageUtilization) : has(self.averageValue)",message="Utilization needs averageUtilization, AverageValue needs averageValue"
type MetricTarget struct {
	Type MetricTargetType `json:"type"`
	// AverageUtilization is the percent of status.allocatable.shoots used,
	// averaged over the set's seeds (Shoots over allocatable, summed).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	AverageUtilization *int32 `json:"averageUtilization,omitempty"`
	// AverageValue is Shoots per seed of the set.
	// +kubebuilder:validation:Minimum=1
	// +optional
	AverageValue *int32 `json:"averageValue,omitempty"`
}

// HeadroomMetricSource keeps room for more Shoots of one kind anywhere on
// the landscape: "keep room for 20 more Shoots like this one". The count
// is made with the placement rules, so seeds of this set count only if
// such Shoots would really go there.
//
// +kubebuilder:validation:XValidation:rule="has(self.profile) != has(self.shoot)",message="set exactly one of profile and shoot"
type HeadroomMetricSource struct {
	// Profile names one of seedwarden's headroom profiles
	// (headroom.profiles[].name in its configuration).
	// +optional
	Profile string `json:"profile,omitempty"`
	// Shoot is an inline core.gardener.cloud/v1beta1 Shoot template, at
	// most 16 KiB of JSON (MaxInlineShootBytes; checked by seedwarden's
	// webhook, which a CRD schema cannot).
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:EmbeddedResource
	// +optional
	Shoot *runtime.RawExtension `json:"shoot,omitempty"`
	// MinShoots is how many more such Shoots must be placeable.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	MinShoots int32 `json:"minShoots"`
	// Pool names one of seedwarden's seed pools (policies.pools[].name in
	// its configuration): the room is then counted on the pool's seeds
	// only, and the set scales for the pending Shoots of the pool's
	// projects only (docs/policies.md).
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	Pool string `json:"pool,omitempty"`
}

// Behavior bounds scaling in each direction, as a HorizontalPodAutoscaler's.
type Behavior struct {
	// ScaleUp defaults to no stabilization window and at most
	// max(2 seeds, 50%) more per 5 minutes.
	// +optional
	ScaleUp *ScalingRules `json:"scaleUp,omitempty"`
	// ScaleDown defaults to a 30-minute stabilization window and at most
	// 1 seed fewer per 10 minutes.
	// +optional
	ScaleDown *ScalingRules `json:"scaleDown,omitempty"`
}

// ScalingRules are one direction's window and step limits.
type ScalingRules struct {
	// StabilizationWindowSeconds: a scale-down takes the highest
	// recommendation of the window, a scale-up the lowest.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=86400
	// +optional
	StabilizationWindowSeconds *int32 `json:"stabilizationWindowSeconds,omitempty"`
	// SelectPolicy picks among the policies' limits: Max (default) the
	// largest change, Min the smallest, Disabled none in this direction.
	// +kubebuilder:validation:Enum=Max;Min;Disabled
	// +optional
	SelectPolicy *ScalingPolicySelect `json:"selectPolicy,omitempty"`
	// Policies limit the change over a period.
	// +optional
	Policies []ScalingPolicy `json:"policies,omitempty"`
}

// ScalingPolicySelect picks among policies.
type ScalingPolicySelect string

// The SelectPolicy values.
const (
	MaxChangePolicySelect ScalingPolicySelect = "Max"
	MinChangePolicySelect ScalingPolicySelect = "Min"
	DisabledPolicySelect  ScalingPolicySelect = "Disabled"
)

// ScalingPolicyType is how a policy's value counts.
// +kubebuilder:validation:Enum=Seeds;Percent
type ScalingPolicyType string

// The policy types: a number of seeds, or a percent of the current replicas.
const (
	SeedsScalingPolicy   ScalingPolicyType = "Seeds"
	PercentScalingPolicy ScalingPolicyType = "Percent"
)

// ScalingPolicy allows at most Value change (seeds, or percent of the
// replicas at the period's start) within PeriodSeconds.
type ScalingPolicy struct {
	Type ScalingPolicyType `json:"type"`
	// +kubebuilder:validation:Minimum=1
	Value int32 `json:"value"`
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=86400
	PeriodSeconds int32 `json:"periodSeconds"`
}

// SeedAutoscalerStatus is what the controller last saw and did.
type SeedAutoscalerStatus struct {
	// ObservedGeneration is the spec generation the status is about.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// CurrentReplicas is the target's spec.replicas when last seen.
	CurrentReplicas int32 `json:"currentReplicas"`
	// DesiredReplicas is what the controller wants now, after behavior.
	DesiredReplicas int32 `json:"desiredReplicas"`
	// LastScaleTime is when the controller last changed the replicas.
	// +optional
	LastScaleTime *metav1.Time `json:"lastScaleTime,omitempty"`
	// Reason is one word for the last decision (ScaledUp, ScaledDown,
	// Steady, AtMaxReplicas, NewSeedsWouldNotHelp, ...).
	// +optional
	Reason string `json:"reason,omitempty"`
	// Message says the decision and why, in words.
	// +optional
	Message string `json:"message,omitempty"`
	// NewSeedModel says what a new replica's Seed was modelled on: the
	// ManagedSeedSet's template, or an existing seed of the set.
	// +optional
	NewSeedModel string `json:"newSeedModel,omitempty"`
	// ScaleIn is the scale-in by drain planned or under way: the replica
	// chosen to be emptied, where its Shoots go and where it stands. Unset
	// when there is none.
	// +optional
	ScaleIn *ScaleInStatus `json:"scaleIn,omitempty"`
	// CurrentMetrics is each metric's value and the replicas it asks for.
	// +optional
	CurrentMetrics []MetricStatus `json:"currentMetrics,omitempty"`
	// Conditions: AbleToScale, ScalingActive, ScalingLimited.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// MetricStatus is one metric as last computed.
type MetricStatus struct {
	// Type is the metric's type.
	Type MetricSourceType `json:"type"`
	// Name is "shoots" for a Resource metric, the profile (or "inline")
	// for a Headroom metric.
	Name string `json:"name"`
	// Current is the value now ("92%", "45 Shoots per seed",
	// "12 more Shoots placeable").
	Current string `json:"current"`
	// DesiredReplicas is the least number of replicas that meets this
	// target (maxReplicas when none does).
	DesiredReplicas int32 `json:"desiredReplicas"`
	// Met says whether the target holds at DesiredReplicas.
	Met bool `json:"met"`
	// Reason says why adding seeds would not help this metric, when so.
	// +optional
	Reason string `json:"reason,omitempty"`
	// ReasonCode is Reason's reason code (docs/placement.md, "Reason
	// codes"), for programs: why a new seed would not take such Shoots.
	// +optional
	ReasonCode string `json:"reasonCode,omitempty"`
}

// Condition types, as a HorizontalPodAutoscaler's.
const (
	ConditionAbleToScale    = "AbleToScale"
	ConditionScalingActive  = "ScalingActive"
	ConditionScalingLimited = "ScalingLimited"
)
