package converge

import (
	"errors"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var stsKind = schema.GroupKind{Group: "apps", Kind: "StatefulSet"}

// The texts below are what kube-apiserver builds: ValidateImmutableField on
// v1.27+ and the spec allow-list Forbidden on older releases, both turned into a
// 422 by apierrors.NewInvalid.
const oldForbidden = "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', " +
	"'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"

func immutable(path ...string) *field.Error {
	return field.Invalid(field.NewPath(path[0], path[1:]...), []corev1.PersistentVolumeClaim{{}}, "field is immutable")
}

func invalid(errs ...*field.Error) error {
	return apierrors.NewInvalid(stsKind, "web", field.ErrorList(errs))
}

func TestIsImmutableTemplateError(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"current server", invalid(immutable("spec", "volumeClaimTemplates")), true},
		{"older server", invalid(field.Forbidden(field.NewPath("spec"), oldForbidden)), true},
		{"older server, shorter list", invalid(field.Forbidden(field.NewPath("spec"),
			"updates to statefulset spec for fields other than 'replicas', 'template', and 'updateStrategy' are forbidden")), true},
		{"among other causes", invalid(immutable("spec", "serviceName"), immutable("spec", "volumeClaimTemplates")), true},
		{"wrapped", fmt.Errorf("sync: %w", invalid(immutable("spec", "volumeClaimTemplates"))), true},
		{"relayed text (Flux condition)", errors.New(`StatefulSet/default/web dry-run failed (Invalid): StatefulSet.apps "web" is invalid: ` +
			`spec.volumeClaimTemplates: Invalid value: []core.PersistentVolumeClaim{...}: field is immutable`), true},
		{"status without causes", &apierrors.StatusError{ErrStatus: metav1.Status{Reason: metav1.StatusReasonInvalid, Code: 422,
			Message: `StatefulSet.apps "web" is invalid: spec: Forbidden: ` + oldForbidden}}, true},
		{"other immutable field", invalid(immutable("spec", "selector")), false},
		{"template value invalid, not immutable", invalid(field.Invalid(field.NewPath("spec", "volumeClaimTemplates").Index(0),
			"x", "must be a valid size")), false},
		{"other forbidden", invalid(field.Forbidden(field.NewPath("spec"), "nope")), false},
		{"conflict", apierrors.NewConflict(schema.GroupResource{Group: "apps", Resource: "statefulsets"}, "web", errors.New("changed")), false},
		{"not found", apierrors.NewNotFound(schema.GroupResource{Group: "apps", Resource: "statefulsets"}, "web"), false},
		{"plain", errors.New("connection refused"), false},
		{"nil", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsImmutableTemplateError(tt.err); got != tt.want {
				t.Fatalf("IsImmutableTemplateError(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

// The texts GitOps tools relay: Flux conditions, Helm release descriptions,
// Argo CD sync results.
func TestIsTemplatesImmutableMessage(t *testing.T) {
	tests := []struct {
		name string
		msg  string
		want bool
	}{
		{"current server (Flux condition)", `StatefulSet/default/web dry-run failed (Invalid): StatefulSet.apps "web" is invalid: ` +
			`spec.volumeClaimTemplates: Invalid value: []core.PersistentVolumeClaim{...}: field is immutable`, true},
		// What argocd-application-controller v3.6.1 recorded for a template
		// bump on kube-apiserver v1.37 (shared/testenv.md).
		{"current server (Argo CD sync result)", `error when patching "/dev/shm/123": StatefulSet.apps "web" is invalid: ` +
			`spec.volumeClaimTemplates: Invalid value: []core.PersistentVolumeClaim{...}: field is immutable (retried 5 times)`, true},
		{"current server, among other causes", `StatefulSet.apps "web" is invalid: [spec.serviceName: Invalid value: "db": field is immutable, ` +
			`spec.volumeClaimTemplates: Invalid value: []core.PersistentVolumeClaim{...}: field is immutable]`, true},
		{"older server (Argo CD sync result)", `StatefulSet.apps "web" is invalid: spec: Forbidden: ` + oldForbidden, true},
		{"older server, the allow-list alone", oldForbidden, true},
		{"older server, shorter list", `spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'template', and 'updateStrategy' are forbidden`, true},
		{"other immutable field", `StatefulSet.apps "web" is invalid: spec.selector: Invalid value: v1.LabelSelector{...}: field is immutable`, false},
		{"template value invalid, not immutable", `StatefulSet.apps "web" is invalid: spec.volumeClaimTemplates[0].spec.resources.requests: Invalid value: "x": must be a valid size`, false},
		{"other forbidden", `StatefulSet.apps "web" is invalid: spec: Forbidden: nope`, false},
		{"other failure", `admission webhook "policy.example" denied the request`, false},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsTemplatesImmutableMessage(tt.msg); got != tt.want {
				t.Fatalf("IsTemplatesImmutableMessage(%q) = %v, want %v", tt.msg, got, tt.want)
			}
		})
	}
}

// onlyImmutableCauses decides between "delete and re-create" and "give up":
// any cause that a re-create would not cure must make it false.
func TestOnlyImmutableCauses(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"templates", invalid(immutable("spec", "volumeClaimTemplates")), true},
		{"templates and serviceName", invalid(immutable("spec", "volumeClaimTemplates"), immutable("spec", "serviceName")), true},
		{"older server", invalid(field.Forbidden(field.NewPath("spec"), oldForbidden)), true},
		{"plus an invalid value", invalid(immutable("spec", "volumeClaimTemplates"),
			field.Invalid(field.NewPath("spec", "replicas"), -1, "must be greater than or equal to 0")), false},
		{"metadata immutable", invalid(field.Invalid(field.NewPath("metadata", "name"), "x", "field is immutable")), false},
		{"forbidden by admission", apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "statefulsets"}, "web", errors.New("denied")), false},
		{"conflict", apierrors.NewConflict(schema.GroupResource{Group: "apps", Resource: "statefulsets"}, "web", errors.New("changed")), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := onlyImmutableCauses(tt.err); got != tt.want {
				t.Fatalf("onlyImmutableCauses(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}
