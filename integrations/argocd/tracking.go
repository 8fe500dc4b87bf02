package argocd

import (
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Annotations Argo CD records its resources with (common/common.go).
const (
	annotationTrackingID     = "argocd.argoproj.io/tracking-id"
	annotationInstallationID = "argocd.argoproj.io/installation-id"
)

// trackingID is a parsed tracking-id (util/argo.AppInstanceValue).
type trackingID struct {
	App, Group, Kind, Namespace, Name string
}

// parseTrackingID mirrors resourceTracking.ParseAppInstanceValue:
// <app>:<group>/<kind>:<namespace>/<name>, the last part holding any
// further colons.
func parseTrackingID(value string) (trackingID, error) {
	parts := strings.SplitN(value, ":", 3)
	if len(parts) != 3 {
		return trackingID{}, fmt.Errorf("tracking-id %q is not <application>:<group>/<kind>:<namespace>/<name>", value)
	}
	gk, nn := strings.Split(parts[1], "/"), strings.Split(parts[2], "/")
	if len(gk) != 2 || len(nn) != 2 {
		return trackingID{}, fmt.Errorf("tracking-id %q is not <application>:<group>/<kind>:<namespace>/<name>", value)
	}
	return trackingID{App: parts[0], Group: gk[0], Kind: gk[1], Namespace: nn[0], Name: nn[1]}, nil
}

// instanceName mirrors Application.InstanceName: what tracking-ids call
// an Application, qualified by its namespace outside the control plane's.
func instanceName(appNamespace, appName, controlPlane string) string {
	if appNamespace == "" || appNamespace == controlPlane {
		return appName
	}
	return appNamespace + "_" + appName
}

// trackedBy says why the live object of kind gk is not one Argo CD's annotation
// tracking records for the Application instance, or nil. Argo CD owns a
// resource whose tracking-id names the instance and the resource itself (a
// copied annotation names another: isSelfReferencedObj), and with an
// installation ID only one carrying that ID (getAppInstanceValue).
func trackedBy(live metav1.Object, gk groupKind, instance, installationID string) error {
	ann := live.GetAnnotations()
	if installationID != "" && ann[annotationInstallationID] != installationID {
		return fmt.Errorf("it is not marked with Argo CD's installation ID %q (%s)", installationID, annotationInstallationID)
	}
	value, ok := ann[annotationTrackingID]
	if !ok {
		return errors.New("it carries no Argo CD tracking-id")
	}
	id, err := parseTrackingID(value)
	if err != nil {
		return err
	}
	if id.App != instance {
		return fmt.Errorf("its tracking-id names Application %q, not %q", id.App, instance)
	}
	if id.Group != gk.Group || id.Kind != gk.Kind || id.Namespace != live.GetNamespace() || id.Name != live.GetName() {
		return fmt.Errorf("its tracking-id %q names another resource", value)
	}
	return nil
}
