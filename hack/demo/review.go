package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	"sigs.k8s.io/yaml"
)

type result struct {
	file, namespace, name string
	allowed               bool
	message               string
	patch                 []map[string]any
	seed                  string
	warnings              []string
}

// review sends the Shoot in file as a CREATE AdmissionReview.
func review(ctx context.Context, client *http.Client, url, file string) (*result, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	obj, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	var meta struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
	}
	if err := json.Unmarshal(obj, &meta); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	shoots := metav1.GroupVersionResource{Group: "core.gardener.cloud", Version: "v1beta1", Resource: "shoots"}
	shootKind := metav1.GroupVersionKind{Group: "core.gardener.cloud", Version: "v1beta1", Kind: "Shoot"}
	dryRun := false
	in := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID:             uuid.NewUUID(),
			Kind:            shootKind,
			Resource:        shoots,
			RequestKind:     &shootKind,
			RequestResource: &shoots,
			Name:            meta.Metadata.Name,
			Namespace:       meta.Metadata.Namespace,
			Operation:       admissionv1.Create,
			UserInfo: authenticationv1.UserInfo{
				Username: "alice@example.com",
				Groups:   []string{"system:authenticated"},
			},
			Object:  runtime.RawExtension{Raw: obj},
			DryRun:  &dryRun,
			Options: runtime.RawExtension{Raw: []byte(`{"kind":"CreateOptions","apiVersion":"meta.k8s.io/v1"}`)},
		},
	}
	body, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	respBody, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s: %s", file, resp.Status, strings.TrimSpace(string(respBody)))
	}
	var out admissionv1.AdmissionReview
	if err := json.Unmarshal(respBody, &out); err != nil {
		return nil, fmt.Errorf("%s: response is not an AdmissionReview: %w", file, err)
	}
	r := out.Response
	if r == nil || r.UID != in.Request.UID {
		return nil, fmt.Errorf("%s: response does not answer request %s", file, in.Request.UID)
	}
	res := &result{file: file, namespace: meta.Metadata.Namespace, name: meta.Metadata.Name, allowed: r.Allowed, warnings: r.Warnings}
	if r.Result != nil {
		res.message = r.Result.Message
	}
	if len(r.Patch) > 0 {
		if err := json.Unmarshal(r.Patch, &res.patch); err != nil {
			return nil, fmt.Errorf("%s: patch is not a JSON patch: %w", file, err)
		}
		res.seed = seedFromPatch(res.patch)
	}
	return res, nil
}

// seedFromPatch finds the seed name the patch sets.
func seedFromPatch(patch []map[string]any) string {
	for _, op := range patch {
		switch op["path"] {
		case "/spec/seedName":
			s, _ := op["value"].(string)
			return s
		case "/spec":
			if spec, ok := op["value"].(map[string]any); ok {
				s, _ := spec["seedName"].(string)
				return s
			}
		}
	}
	return ""
}

func (r *result) print(w io.Writer) {
	fmt.Fprintf(w, "%s (Shoot %s/%s)\n", r.file, r.namespace, r.name)
	fmt.Fprintf(w, "  allowed:  %t\n", r.allowed)
	if r.message != "" {
		fmt.Fprintf(w, "  message:  %s\n", r.message)
	}
	if len(r.patch) == 0 {
		fmt.Fprintln(w, "  patch:    none")
	} else {
		fmt.Fprintln(w, "  patch:")
		for _, op := range r.patch {
			b, _ := json.Marshal(op)
			fmt.Fprintf(w, "    %s\n", b)
		}
	}
	if r.seed != "" {
		fmt.Fprintf(w, "  seed:     %s\n", r.seed)
	}
	if len(r.warnings) == 0 {
		fmt.Fprintln(w, "  warnings: none")
	} else {
		fmt.Fprintln(w, "  warnings:")
		for _, s := range r.warnings {
			fmt.Fprintf(w, "    %s\n", s)
		}
	}
	fmt.Fprintln(w)
}
