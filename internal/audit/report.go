package audit

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/seedwarden/seedwarden/internal/api"
)

// The audit writes OpenReports Reports (openreports.io/v1alpha1), the
// successor of the Policy WG's wgpolicyk8s.io PolicyReport, which Kyverno
// writes since 1.15 (docs/operations.md, "Placement audit", says why this
// one). The types below are the subset of the
// upstream API the audit writes, declared here rather than imported (the
// module pins other k8s.io versions); report_schema_test.go validates what
// they produce against the upstream CRD in testdata.
var ReportGVK = schema.GroupVersionKind{Group: "openreports.io", Version: "v1alpha1", Kind: "Report"}

const (
	// ReportName is the audit's report in each project namespace.
	ReportName = "seedwarden-placement"
	// Source names the audit as the producer of its reports and results.
	Source = "seedwarden"
	// Policy is every result's policy: the placement rules of staying on
	// a seed; the rule is a placement reason code.
	Policy = "seedwarden-placement"
	// Category and Severity of every result: a Shoot on a seed that today's
	// rules refuse keeps running, but its next reconciliation may not.
	Category = "Placement"
	Severity = "medium"
	// LabelManagedBy marks the reports the audit owns: only those are
	// updated and removed.
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// PropertySeed is the result property naming the Shoot's seed.
	PropertySeed = "seed"
)

// Report is an openreports.io/v1alpha1 Report.
type Report struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Source            string         `json:"source,omitempty"`
	Configuration     *Configuration `json:"configuration,omitempty"`
	Summary           Summary        `json:"summary"`
	Results           []ReportResult `json:"results,omitempty"`
}

// Configuration holds the results limit a report was written with.
type Configuration struct {
	Limits Limits `json:"limits"`
}

// Limits: maxResults is audit.resultsLimit.
type Limits struct {
	MaxResults int `json:"maxResults"`
}

// Summary counts the results: fail counts all of them, also those beyond
// the limit that the report does not list.
type Summary struct {
	Pass  int `json:"pass"`
	Fail  int `json:"fail"`
	Warn  int `json:"warn"`
	Error int `json:"error"`
	Skip  int `json:"skip"`
}

// ReportResult is one Shoot breaking one rule.
type ReportResult struct {
	Source     string                   `json:"source,omitempty"`
	Policy     string                   `json:"policy"`
	Rule       string                   `json:"rule,omitempty"`
	Category   string                   `json:"category,omitempty"`
	Severity   string                   `json:"severity,omitempty"`
	Timestamp  metav1.Timestamp         `json:"timestamp,omitempty"`
	Result     string                   `json:"result,omitempty"`
	Resources  []corev1.ObjectReference `json:"resources,omitempty"`
	Message    string                   `json:"message,omitempty"`
	Properties map[string]string        `json:"properties,omitempty"`
}

// NewReport is the report of one namespace's results (sorted, as Scan
// returns them), the first limit of them listed. A result already in prev
// (same Shoot and rule) keeps prev's timestamp, when it was first found;
// new ones get now. Every field but the timestamps is a function of the
// results, so Equal tells whether a write is needed.
func NewReport(namespace string, results []Result, limit int, prev *Report, now time.Time) *Report {
	r := &Report{
		TypeMeta:      metav1.TypeMeta{APIVersion: ReportGVK.GroupVersion().String(), Kind: ReportGVK.Kind},
		ObjectMeta:    metav1.ObjectMeta{Name: ReportName, Namespace: namespace, Labels: map[string]string{LabelManagedBy: Source}},
		Source:        Source,
		Configuration: &Configuration{Limits: Limits{MaxResults: limit}},
		Summary:       Summary{Fail: len(results)},
	}
	seen := map[[2]string]metav1.Timestamp{}
	if prev != nil {
		for _, p := range prev.Results {
			if len(p.Resources) == 1 {
				seen[[2]string{p.Resources[0].Name, p.Rule}] = p.Timestamp
			}
		}
	}
	stamp := metav1.Timestamp{Seconds: now.Unix()}
	for _, res := range results[:min(len(results), limit)] {
		ts, ok := seen[[2]string{res.Shoot, string(res.Rule)}]
		if !ok {
			ts = stamp
		}
		r.Results = append(r.Results, ReportResult{
			Source: Source, Policy: Policy, Rule: string(res.Rule), Category: Category, Severity: Severity,
			Timestamp: ts, Result: "fail", Message: res.Message,
			Resources:  []corev1.ObjectReference{{APIVersion: api.SchemeGroupVersion.String(), Kind: "Shoot", Namespace: res.Namespace, Name: res.Shoot}},
			Properties: map[string]string{PropertySeed: res.Seed},
		})
	}
	return r
}

// Equal reports whether two reports say the same: source, limits, summary
// and results (timestamps included, which NewReport carries over).
func Equal(a, b *Report) bool {
	return a.Source == b.Source &&
		apiequality.Semantic.DeepEqual(a.Configuration, b.Configuration) &&
		a.Summary == b.Summary &&
		apiequality.Semantic.DeepEqual(a.Results, b.Results)
}

// ByNamespace splits sorted results into each namespace's.
func ByNamespace(results []Result) map[string][]Result {
	out := map[string][]Result{}
	for i := 0; i < len(results); {
		j := i + 1
		for j < len(results) && results[j].Namespace == results[i].Namespace {
			j++
		}
		out[results[i].Namespace] = results[i:j:j]
		i = j
	}
	return out
}
