package api

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Well-known names from Gardener.
const (
	// ResourceShoots is the key of status.allocatable that limits shoots per seed.
	ResourceShoots corev1.ResourceName = "shoots"

	ConditionGardenletReady     = "GardenletReady"
	ConditionBackupBucketsReady = "BackupBucketsReady"
	ConditionTrue               = "True"

	AnnotationEmergencyStop = "shoot.gardener.cloud/emergency-stop-reconciliations"

	LabelSchedulingPurpose             = "scheduling.gardener.cloud/purpose"
	LabelSchedulingPurposeRegionConfig = "region-config"
	AnnotationSchedulingCloudProfiles  = "scheduling.gardener.cloud/cloudprofiles"

	KindCloudProfile           = "CloudProfile"
	KindNamespacedCloudProfile = "NamespacedCloudProfile"

	PurposeTesting = "testing"

	FailureToleranceZone = "zone"
	FailureToleranceNode = "node"

	ZoneSelectionEnforce = "Enforce"
	ZoneSelectionPrefer  = "Prefer"

	IPFamilyIPv4 = "IPv4"
	IPFamilyIPv6 = "IPv6"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced
// +kubebuilder:subresource:status

// Shoot is a Kubernetes cluster whose control plane runs on a Seed.
type Shoot struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ShootSpec   `json:"spec,omitempty"`
	Status            ShootStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ShootList is a list of Shoots.
type ShootList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Shoot `json:"items"`
}

// ShootSpec holds the fields of a Shoot's spec that placement reads.
type ShootSpec struct {
	// CloudProfileName is deprecated in favour of CloudProfile.
	CloudProfileName   *string                        `json:"cloudProfileName,omitempty"`
	CloudProfile       *CloudProfileReference         `json:"cloudProfile,omitempty"`
	Region             string                         `json:"region,omitempty"`
	Provider           ShootProvider                  `json:"provider,omitempty"`
	Networking         *Networking                    `json:"networking,omitempty"`
	Purpose            *string                        `json:"purpose,omitempty"`
	SeedName           *string                        `json:"seedName,omitempty"`
	SeedSelector       *SeedSelector                  `json:"seedSelector,omitempty"`
	Tolerations        []Toleration                   `json:"tolerations,omitempty"`
	ControlPlane       *ControlPlane                  `json:"controlPlane,omitempty"`
	AccessRestrictions []AccessRestrictionWithOptions `json:"accessRestrictions,omitempty"`
	DNS                *DNS                           `json:"dns,omitempty"`
	SchedulerName      *string                        `json:"schedulerName,omitempty"`
	// Maintenance is read by the SeedDrain controller only (its time
	// window, with respectMaintenanceWindow); placement ignores it.
	Maintenance *Maintenance `json:"maintenance,omitempty"`
}

// Maintenance is the part of a Shoot's maintenance settings seedwarden
// reads.
type Maintenance struct {
	TimeWindow *MaintenanceTimeWindow `json:"timeWindow,omitempty"`
}

// MaintenanceTimeWindow is Gardener's daily window, begin and end as
// HHMMSS+ZONE (for example 220000+0100).
type MaintenanceTimeWindow struct {
	Begin string `json:"begin"`
	End   string `json:"end"`
}

// CloudProfileReference names a CloudProfile or NamespacedCloudProfile.
type CloudProfileReference struct {
	// Kind defaults to CloudProfile.
	Kind string `json:"kind,omitempty"`
	Name string `json:"name"`
}

// ShootProvider is the Shoot's infrastructure provider.
type ShootProvider struct {
	Type    string   `json:"type"`
	Workers []Worker `json:"workers,omitempty"`
}

// Worker is a worker pool; its zones matter for placement, and whether it
// runs the control plane (a self-hosted Shoot, which is not placed).
type Worker struct {
	Name  string   `json:"name"`
	Zones []string `json:"zones,omitempty"`
	// ControlPlane set makes the Shoot self-hosted: its control plane runs in
	// this pool, in the Shoot's own cluster, not on a seed.
	ControlPlane *WorkerControlPlane `json:"controlPlane,omitempty"`
}

// WorkerControlPlane is Gardener's worker control-plane settings (backup,
// exposure). Only its presence matters here, so none of its fields is
// modelled; decoding ignores them and the e2e CRDs keep them.
type WorkerControlPlane struct{}

// Networking is the Shoot's network configuration.
type Networking struct {
	Type       *string  `json:"type,omitempty"`
	Nodes      *string  `json:"nodes,omitempty"`
	Pods       *string  `json:"pods,omitempty"`
	Services   *string  `json:"services,omitempty"`
	IPFamilies []string `json:"ipFamilies,omitempty"`
}

// SeedSelector selects seeds by labels and, in a CloudProfile, by provider type.
type SeedSelector struct {
	metav1.LabelSelector `json:",inline"`
	ProviderTypes        []string `json:"providerTypes,omitempty"`
}

// Toleration tolerates a seed taint.
type Toleration struct {
	Key   string  `json:"key"`
	Value *string `json:"value,omitempty"`
}

// ControlPlane holds control-plane placement settings.
type ControlPlane struct {
	HighAvailability *HighAvailability `json:"highAvailability,omitempty"`
	Zones            []string          `json:"zones,omitempty"`
}

// HighAvailability configures the control plane's failure tolerance.
type HighAvailability struct {
	FailureTolerance FailureTolerance `json:"failureTolerance"`
}

// FailureTolerance is `node` or `zone`.
type FailureTolerance struct {
	Type string `json:"type"`
}

// AccessRestrictionWithOptions is an access restriction a Shoot asks for.
type AccessRestrictionWithOptions struct {
	Name    string            `json:"name"`
	Options map[string]string `json:"options,omitempty"`
}

// DNS is the Shoot's DNS configuration.
type DNS struct {
	Domain *string `json:"domain,omitempty"`
}

// ShootStatus holds the fields of a Shoot's status that placement reads.
type ShootStatus struct {
	SeedName      *string           `json:"seedName,omitempty"`
	Networking    *NetworkingStatus `json:"networking,omitempty"`
	LastOperation *LastOperation    `json:"lastOperation,omitempty"`
}

// NetworkingStatus lists the networks a Shoot actually uses.
type NetworkingStatus struct {
	Nodes       []string `json:"nodes,omitempty"`
	Pods        []string `json:"pods,omitempty"`
	Services    []string `json:"services,omitempty"`
	EgressCIDRs []string `json:"egressCIDRs,omitempty"`
}

// LastOperation is the last operation on an object.
type LastOperation struct {
	Description    string      `json:"description,omitempty"`
	LastUpdateTime metav1.Time `json:"lastUpdateTime,omitempty"`
	Progress       int32       `json:"progress,omitempty"`
	State          string      `json:"state,omitempty"`
	Type           string      `json:"type,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:subresource:status

// Seed is a cluster that hosts Shoot control planes.
type Seed struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              SeedSpec   `json:"spec,omitempty"`
	Status            SeedStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// SeedList is a list of Seeds.
type SeedList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Seed `json:"items"`
}

// SeedSpec holds the fields of a Seed's spec that placement reads.
type SeedSpec struct {
	Provider           SeedProvider        `json:"provider"`
	Networks           SeedNetworks        `json:"networks"`
	Taints             []SeedTaint         `json:"taints,omitempty"`
	Backup             *SeedBackup         `json:"backup,omitempty"`
	Settings           *SeedSettings       `json:"settings,omitempty"`
	AccessRestrictions []AccessRestriction `json:"accessRestrictions,omitempty"`
	DNS                SeedDNS             `json:"dns,omitempty"`
}

// SeedProvider is the Seed's infrastructure.
type SeedProvider struct {
	Type   string   `json:"type"`
	Region string   `json:"region"`
	Zones  []string `json:"zones,omitempty"`
}

// SeedNetworks are the Seed's own networks and the defaults it gives Shoots.
type SeedNetworks struct {
	Nodes         *string        `json:"nodes,omitempty"`
	Pods          string         `json:"pods"`
	Services      string         `json:"services"`
	ShootDefaults *ShootNetworks `json:"shootDefaults,omitempty"`
}

// ShootNetworks are default Shoot networks.
type ShootNetworks struct {
	Pods     *string `json:"pods,omitempty"`
	Services *string `json:"services,omitempty"`
}

// SeedTaint keeps Shoots that do not tolerate it away.
type SeedTaint struct {
	Key   string  `json:"key"`
	Value *string `json:"value,omitempty"`
}

// SeedBackup configures backups; only its presence and provider matter here.
type SeedBackup struct {
	Provider string  `json:"provider"`
	Region   *string `json:"region,omitempty"`
}

// SeedSettings are the Seed's settings.
type SeedSettings struct {
	Scheduling    *SeedSettingScheduling    `json:"scheduling,omitempty"`
	ZoneSelection *SeedSettingZoneSelection `json:"zoneSelection,omitempty"`
}

// SeedSettingScheduling controls whether the scheduler sees the Seed.
type SeedSettingScheduling struct {
	Visible bool `json:"visible"`
}

// SeedSettingZoneSelection is how strictly worker zones bind placement.
type SeedSettingZoneSelection struct {
	Mode string `json:"mode,omitempty"`
}

// AccessRestriction is an access restriction a Seed supports.
type AccessRestriction struct {
	Name string `json:"name"`
}

// SeedDNS is the Seed's DNS configuration.
type SeedDNS struct {
	Defaults []SeedDNSProviderConfig `json:"defaults,omitempty"`
	Internal *SeedDNSProviderConfig  `json:"internal,omitempty"`
}

// SeedDNSProviderConfig is a DNS domain served for the Seed.
type SeedDNSProviderConfig struct {
	Type   string `json:"type,omitempty"`
	Domain string `json:"domain"`
}

// SeedStatus holds the fields of a Seed's status that placement reads.
type SeedStatus struct {
	LastOperation *LastOperation      `json:"lastOperation,omitempty"`
	Conditions    []Condition         `json:"conditions,omitempty"`
	Allocatable   corev1.ResourceList `json:"allocatable,omitempty"`
	Capacity      corev1.ResourceList `json:"capacity,omitempty"`
}

// Condition is a Gardener condition.
type Condition struct {
	Type               string      `json:"type"`
	Status             string      `json:"status"`
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	LastUpdateTime     metav1.Time `json:"lastUpdateTime,omitempty"`
	Reason             string      `json:"reason,omitempty"`
	Message            string      `json:"message,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster

// CloudProfile describes an infrastructure offering.
type CloudProfile struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              CloudProfileSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// CloudProfileList is a list of CloudProfiles.
type CloudProfileList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []CloudProfile `json:"items"`
}

// CloudProfileSpec holds the fields of a CloudProfile that placement reads.
type CloudProfileSpec struct {
	Type         string        `json:"type,omitempty"`
	SeedSelector *SeedSelector `json:"seedSelector,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced
// +kubebuilder:subresource:status

// NamespacedCloudProfile is a project-scoped derivation of a CloudProfile.
type NamespacedCloudProfile struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              NamespacedCloudProfileSpec   `json:"spec,omitempty"`
	Status            NamespacedCloudProfileStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// NamespacedCloudProfileList is a list of NamespacedCloudProfiles.
type NamespacedCloudProfileList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NamespacedCloudProfile `json:"items"`
}

// NamespacedCloudProfileSpec names the parent profile.
type NamespacedCloudProfileSpec struct {
	Parent CloudProfileReference `json:"parent"`
}

// NamespacedCloudProfileStatus carries the merged profile that Shoots use.
type NamespacedCloudProfileStatus struct {
	CloudProfileSpec CloudProfileSpec `json:"cloudProfileSpec,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster

// Project groups Shoots in one namespace.
type Project struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ProjectSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// ProjectList is a list of Projects.
type ProjectList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Project `json:"items"`
}

// ProjectSpec links a Project to its namespace.
type ProjectSpec struct {
	Namespace *string `json:"namespace,omitempty"`
}
