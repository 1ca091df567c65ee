package handlers

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/seedwarden/seedwarden/internal/admissionjson"
)

// KubeconfigSecretKey is the Secret data key whose value is validated.
const KubeconfigSecretKey = "kubeconfig"

// Kubeconfig fields (by their kubeconfig YAML names) that are not allowed
// unless listed in KubeconfigSecretValidator.AllowedFields. Users may only
// authenticate with client-certificate-data, client-key-data, token, username
// and password: everything else makes the component that reads the kubeconfig
// read local files, run commands, impersonate, or use credentials of its own
// environment.
const (
	KubeconfigFieldClientCertificate    = "client-certificate"
	KubeconfigFieldClientKey            = "client-key"
	KubeconfigFieldTokenFile            = "tokenFile"
	KubeconfigFieldImpersonate          = "as"
	KubeconfigFieldImpersonateUID       = "as-uid"
	KubeconfigFieldImpersonateGroups    = "as-groups"
	KubeconfigFieldImpersonateUserExtra = "as-user-extra"
	KubeconfigFieldAuthProvider         = "auth-provider"
	KubeconfigFieldExec                 = "exec"
	// KubeconfigFieldCertificateAuthority is a cluster's CA file path.
	KubeconfigFieldCertificateAuthority = "certificate-authority"
)

// KubeconfigRestrictedFields lists every field the validator denies by
// default, in the order they are checked; these are the names AllowedFields
// may contain.
var KubeconfigRestrictedFields = []string{
	KubeconfigFieldClientCertificate,
	KubeconfigFieldClientKey,
	KubeconfigFieldTokenFile,
	KubeconfigFieldImpersonate,
	KubeconfigFieldImpersonateUID,
	KubeconfigFieldImpersonateGroups,
	KubeconfigFieldImpersonateUserExtra,
	KubeconfigFieldAuthProvider,
	KubeconfigFieldExec,
	KubeconfigFieldCertificateAuthority,
}

// ValidateKubeconfigAllowedFields reports allow-list entries that name no
// restricted field (a typo would otherwise silently allow nothing). The
// always-allowed fields (client-certificate-data, client-key-data, token,
// username, password) are accepted too.
func ValidateKubeconfigAllowedFields(fields []string) error {
	var bad []string
	for _, f := range fields {
		if !slices.Contains(KubeconfigRestrictedFields, f) && !slices.Contains(kubeconfigAlwaysAllowed, f) {
			bad = append(bad, fmt.Sprintf("%q", f))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("unknown kubeconfig field(s) %s (want any of %s)", strings.Join(bad, ", "), strings.Join(KubeconfigRestrictedFields, ", "))
	}
	return nil
}

var kubeconfigAlwaysAllowed = []string{"client-certificate-data", "client-key-data", "token", "username", "password"}

// maxKubeconfigViolations bounds how many violations one denial lists.
const maxKubeconfigViolations = 10

// KubeconfigSecretValidator is the validating webhook for v1 Secret CREATE and
// UPDATE: a Secret with data.kubeconfig must hold a kubeconfig that
// client-go's clientcmd can load and whose users only use
// client-certificate-data, client-key-data, token, username and password
// (Gardener's admission controller rule, as for kubeconfigs of Seeds,
// backups or infrastructure credentials that Gardener components use).
//
// Denied unless in AllowedFields: a user's client-certificate or client-key
// (file paths), tokenFile, impersonation (as, as-uid, as-groups,
// as-user-extra), any auth-provider (Gardener only rejects one with config,
// but a bare provider such as gcp or azure takes credentials from the reading
// component's own environment), exec, and — stricter than Gardener, which
// only looks at users — a cluster's certificate-authority file path, which
// can only name a file on the reading side.
//
// Every user and cluster entry is checked, whether a context (or
// current-context) refers to it or not: what is stored may be selected
// later. Extensions are ignored.
type KubeconfigSecretValidator struct {
	// AllowedFields permits more fields, by their kubeconfig YAML names (see
	// KubeconfigRestrictedFields).
	AllowedFields []string
	Log           logr.Logger
	// Enforce answers a Secret whose kubeconfig is refused: deny, warn or
	// dryrun. An unreadable request is refused whatever it says. nil: deny.
	Enforce *Enforcer
}

var _ admission.Handler = (*KubeconfigSecretValidator)(nil)

// Handle implements admission.Handler.
func (v *KubeconfigSecretValidator) Handle(_ context.Context, req admission.Request) admission.Response {
	log := v.Log.WithValues("uid", req.UID, "namespace", req.Namespace, "name", req.Name, "operation", req.Operation)

	if err := checkCoreV1Target(req, "Secret", "secrets"); err != nil {
		logRejected(log, err, "Rejecting admission request")
		return admission.Errored(http.StatusBadRequest, err)
	}
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return admission.Allowed(fmt.Sprintf("seedwarden: nothing to validate for operation %q", req.Operation))
	}
	secret, err := admissionjson.DecodeSecret(req.Object.Raw, KubeconfigSecretKey)
	if err != nil {
		logRejected(log, err, "Rejecting admission request")
		return admission.Errored(http.StatusBadRequest, err)
	}

	// The API server folds stringData into data before admission; should a
	// request still carry it, it is what would be stored, so check both.
	var sources [][]byte
	if kc, ok := secret.Data[KubeconfigSecretKey]; ok {
		sources = append(sources, kc)
	}
	if kc, ok := secret.StringData[KubeconfigSecretKey]; ok {
		sources = append(sources, []byte(kc))
	}
	if len(sources) == 0 {
		return admission.Allowed("seedwarden: no data.kubeconfig")
	}
	for _, kc := range sources {
		if msg := v.validate(kc); msg != "" {
			log.Info("Secret with a disallowed kubeconfig refused", "user", req.UserInfo.Username, "reason", msg, "enforcement", v.Enforce.Action())
			return v.Enforce.refuse(req, requestObject(req, req.Namespace, req.Name, ""), msg)
		}
	}
	return admission.Allowed("seedwarden: kubeconfig uses only allowed fields")
}

// validate returns the denial message for a kubeconfig, or "" if it is fine.
func (v *KubeconfigSecretValidator) validate(kubeconfig []byte) string {
	cfg, err := clientcmd.Load(kubeconfig)
	if err != nil {
		return fmt.Sprintf("kubeconfig: cannot be parsed: %v", err)
	}
	violations := KubeconfigViolations(cfg, v.AllowedFields)
	if len(violations) == 0 {
		return ""
	}
	more := ""
	if len(violations) > maxKubeconfigViolations {
		more = fmt.Sprintf("; and %d more", len(violations)-maxKubeconfigViolations)
		violations = violations[:maxKubeconfigViolations]
	}
	return "kubeconfig: " + strings.Join(violations, "; ") + more
}

// KubeconfigViolations lists, sorted by user then cluster name and in the
// order of KubeconfigRestrictedFields, every use of a field that is neither
// always allowed nor in allowed, e.g. `user "admin" uses field "exec", which
// is not allowed`. A nil cfg has none.
func KubeconfigViolations(cfg *clientcmdapi.Config, allowed []string) []string {
	if cfg == nil {
		return nil
	}
	var out []string
	deny := func(kind, name, field string) {
		if !slices.Contains(allowed, field) {
			out = append(out, fmt.Sprintf("%s %q uses field %q, which is not allowed", kind, name, field))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.AuthInfos)) {
		for _, field := range restrictedUserFields(cfg.AuthInfos[name]) {
			deny("user", name, field)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.Clusters)) {
		if c := cfg.Clusters[name]; c != nil && c.CertificateAuthority != "" {
			deny("cluster", name, KubeconfigFieldCertificateAuthority)
		}
	}
	return out
}

// restrictedUserFields lists the restricted fields a user sets, in the
// order of KubeconfigRestrictedFields (none for a nil user).
func restrictedUserFields(ai *clientcmdapi.AuthInfo) []string {
	if ai == nil {
		return nil
	}
	var fields []string
	for _, f := range []struct {
		set  bool
		name string
	}{
		{ai.ClientCertificate != "", KubeconfigFieldClientCertificate},
		{ai.ClientKey != "", KubeconfigFieldClientKey},
		{ai.TokenFile != "", KubeconfigFieldTokenFile},
		{ai.Impersonate != "", KubeconfigFieldImpersonate},
		{ai.ImpersonateUID != "", KubeconfigFieldImpersonateUID},
		{len(ai.ImpersonateGroups) > 0, KubeconfigFieldImpersonateGroups},
		{len(ai.ImpersonateUserExtra) > 0, KubeconfigFieldImpersonateUserExtra},
		{ai.AuthProvider != nil, KubeconfigFieldAuthProvider},
		{ai.Exec != nil, KubeconfigFieldExec},
	} {
		if f.set {
			fields = append(fields, f.name)
		}
	}
	return fields
}
