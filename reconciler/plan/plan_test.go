package plan

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/diff"
	"k8s.io/apimachinery/pkg/api/resource"
)

// claim builds a ClaimChange of template t, ordinal o, in one of the states
// the diff produces; sizes are template 20Gi.
func claim(t string, o int32, state string) diff.ClaimChange {
	q := resource.MustParse
	c := diff.ClaimChange{
		Template: t, Ordinal: o, Name: t + "-web-" + strconv.Itoa(int(o)),
		TemplateRequest: q("20Gi"), RequestFrom: q("20Gi"), RequestTo: q("20Gi"), Capacity: q("20Gi"),
	}
	switch state {
	case "compatible":
		c.Compatible = true
	case "oversized":
		c.Compatible, c.OverSized, c.RequestFrom, c.RequestTo, c.Capacity = true, true, q("30Gi"), q("30Gi"), q("30Gi")
	case "grow": // needs a patch
		c.RequestFrom, c.Capacity = q("10Gi"), q("10Gi")
		c.Reasons = []string{"capacity 10Gi < template 20Gi"}
	case "resizing": // patched, storage catching up
		c.Capacity = q("10Gi")
		c.Reasons = []string{"capacity 10Gi < template 20Gi"}
	case "offline": // patched, expanded, the file system waits for a remount
		c.Capacity, c.NodeResizePending = q("10Gi"), true
		c.Reasons = []string{"capacity 10Gi < template 20Gi"}
	case "failed":
		c.Capacity = q("10Gi")
		c.ResizeError = "ControllerResizeError: quota exceeded"
	case "denied":
		c.RequestFrom, c.Capacity = q("10Gi"), q("10Gi")
		c.Immutable = []diff.Mismatch{{Field: diff.FieldStorageClass, Live: `"standard"`, Desired: `"fast"`}}
	case "missing":
		c.Missing, c.RequestFrom, c.Capacity = true, resource.Quantity{}, resource.Quantity{}
	default:
		panic("unknown state " + state)
	}
	// As the diff counts them (diff.Bytes; these sizes are whole bytes).
	c.TemplateBytes, c.FromBytes, c.ToBytes = c.TemplateRequest.Value(), c.RequestFrom.Value(), c.RequestTo.Value()
	return c
}

func claims(cs ...diff.ClaimChange) diff.Result { return diff.Result{Claims: cs} }

func TestBuild(t *testing.T) {
	inPlace := func(n int) Options { return Options{Strategy: v1alpha1.InPlace, MaxConcurrent: n} }
	const (
		compatible = v1alpha1.ClaimCompatible
		pending    = v1alpha1.ClaimPending
		patching   = v1alpha1.ClaimPatching
		resizing   = v1alpha1.ClaimResizing
		denied     = v1alpha1.ClaimDenied
		failed     = v1alpha1.ClaimFailed
		restart    = v1alpha1.ClaimWaitingForRestart
	)
	cases := []struct {
		name     string
		diff     diff.Result
		opts     Options
		phases   []v1alpha1.ClaimPhase // per claim, in diff order
		patch    []string              // claim names, in patch order
		done     bool
		blocked  []string          // substrings; none means Blocked must be empty
		messages map[string]string // claim name → substring of its message
	}{{
		name:   "all compatible: done",
		diff:   claims(claim("data", 0, "compatible"), claim("data", 1, "oversized")),
		opts:   inPlace(1),
		phases: []v1alpha1.ClaimPhase{compatible, compatible},
		done:   true,
		messages: map[string]string{
			"data-web-0": "compatible",
			"data-web-1": "over-sized: requests 30Gi, template 20Gi",
		},
	}, {
		name:     "max 1: highest ordinal first, the rest wait",
		diff:     claims(claim("data", 0, "grow"), claim("data", 1, "grow"), claim("data", 2, "grow")),
		opts:     inPlace(1),
		phases:   []v1alpha1.ClaimPhase{pending, pending, patching},
		patch:    []string{"data-web-2"},
		messages: map[string]string{"data-web-2": "storage 10Gi → 20Gi", "data-web-0": "waiting for its turn (1 in flight, at most 1)"},
	}, {
		name:   "max 2: two highest ordinals",
		diff:   claims(claim("data", 0, "grow"), claim("data", 1, "grow"), claim("data", 2, "grow")),
		opts:   inPlace(2),
		phases: []v1alpha1.ClaimPhase{pending, patching, patching},
		patch:  []string{"data-web-2", "data-web-1"},
	}, {
		name:     "resizing claims count as in flight",
		diff:     claims(claim("data", 0, "grow"), claim("data", 1, "grow"), claim("data", 2, "resizing")),
		opts:     inPlace(2),
		phases:   []v1alpha1.ClaimPhase{pending, patching, resizing},
		patch:    []string{"data-web-1"},
		messages: map[string]string{"data-web-2": "waiting for storage: capacity 10Gi < template 20Gi"},
	}, {
		name:     "a claim waiting for its Pod to restart is in flight, not blocking",
		diff:     claims(claim("data", 0, "grow"), claim("data", 1, "grow"), claim("data", 2, "offline")),
		opts:     inPlace(2),
		phases:   []v1alpha1.ClaimPhase{pending, patching, restart},
		patch:    []string{"data-web-1"},
		messages: map[string]string{"data-web-2": "waiting for its Pod (ordinal 2) to restart: the volume is expanded to 20Gi"},
	}, {
		name:   "a claim waiting for a restart holds the next at max 1",
		diff:   claims(claim("data", 0, "grow"), claim("data", 1, "offline")),
		opts:   inPlace(1),
		phases: []v1alpha1.ClaimPhase{pending, restart},
	}, {
		name: "a claim still to patch is patched, not waiting for a restart",
		diff: claims(func() diff.ClaimChange {
			c := claim("data", 0, "grow")
			c.NodeResizePending = true // an earlier expansion; the template grew again
			return c
		}()),
		opts:   inPlace(1),
		phases: []v1alpha1.ClaimPhase{patching},
		patch:  []string{"data-web-0"},
	}, {
		name:   "in flight at the limit: nothing patched, not blocked",
		diff:   claims(claim("data", 0, "grow"), claim("data", 1, "resizing")),
		opts:   inPlace(1),
		phases: []v1alpha1.ClaimPhase{pending, resizing},
	}, {
		name: "across templates: ordinal descending, then template order",
		diff: claims(claim("data", 0, "grow"), claim("data", 1, "grow"),
			claim("logs", 0, "grow"), claim("logs", 1, "grow")),
		opts:   inPlace(3),
		phases: []v1alpha1.ClaimPhase{patching, patching, pending, patching},
		patch:  []string{"data-web-1", "logs-web-1", "data-web-0"},
	}, {
		name:     "OnClaimDelete patches nothing and says why",
		diff:     claims(claim("data", 0, "grow"), claim("data", 1, "compatible"), claim("data", 2, "resizing")),
		opts:     Options{Strategy: v1alpha1.OnClaimDelete, MaxConcurrent: 5},
		phases:   []v1alpha1.ClaimPhase{pending, compatible, resizing},
		messages: map[string]string{"data-web-0": "keeps its old spec until the PVC is deleted"},
	}, {
		name:     "unknown strategy patches nothing and blocks",
		diff:     claims(claim("data", 0, "grow")),
		opts:     Options{Strategy: "Inplace", MaxConcurrent: 1},
		phases:   []v1alpha1.ClaimPhase{pending},
		blocked:  []string{`unknown update strategy "Inplace"`},
		messages: map[string]string{"data-web-0": "until the PVC is deleted"},
	}, {
		name:     "failed claim stops new patches",
		diff:     claims(claim("data", 0, "grow"), claim("data", 1, "grow"), claim("data", 2, "failed")),
		opts:     inPlace(3),
		phases:   []v1alpha1.ClaimPhase{pending, pending, failed},
		blocked:  []string{"failed claims stop new patches: data-web-2"},
		messages: map[string]string{"data-web-2": "resize failed: ControllerResizeError: quota exceeded", "data-web-1": "patches stopped by failed claims data-web-2"},
	}, {
		name:     "denied claims do not hold back the others",
		diff:     claims(claim("data", 0, "grow"), claim("data", 1, "grow"), claim("data", 2, "denied")),
		opts:     inPlace(1),
		phases:   []v1alpha1.ClaimPhase{pending, patching, denied},
		patch:    []string{"data-web-1"},
		blocked:  []string{"immutable fields differ on data-web-2"},
		messages: map[string]string{"data-web-2": `spec.storageClassName: PVC "standard", template "fast"`},
	}, {
		name: "a policy denial stops every patch of the StatefulSet",
		diff: claims(claim("data", 0, "grow"), claim("data", 1, "grow"), claim("data", 2, "grow")),
		opts: Options{Strategy: v1alpha1.InPlace, MaxConcurrent: 3,
			PolicyDenied: map[string]string{"data-web-1": "max-step: +150% is more than 100%"}},
		phases:  []v1alpha1.ClaimPhase{pending, denied, pending},
		blocked: []string{"denied by policy: data-web-1"},
		messages: map[string]string{
			"data-web-1": "denied by policy: max-step: +150%",
			"data-web-2": "patches stopped by policy denials of data-web-1",
		},
	}, {
		name: "a policy may deny a compatible over-sized claim (a template decrease)",
		diff: claims(claim("data", 0, "oversized")),
		opts: Options{Strategy: v1alpha1.InPlace, MaxConcurrent: 1,
			PolicyDenied: map[string]string{"data-web-0": "increase-only: 20Gi is below 30Gi"}},
		phases:   []v1alpha1.ClaimPhase{denied},
		blocked:  []string{"denied by policy: data-web-0"},
		messages: map[string]string{"data-web-0": "increase-only"},
	}, {
		name:   "a policy denial of a missing claim waits for the claim",
		diff:   claims(claim("data", 0, "missing")),
		opts:   Options{Strategy: v1alpha1.InPlace, MaxConcurrent: 1, PolicyDenied: map[string]string{"data-web-0": "x"}},
		phases: []v1alpha1.ClaimPhase{pending},
	}, {
		name:     "missing claims wait for the StatefulSet controller, not in flight",
		diff:     claims(claim("data", 0, "grow"), claim("data", 1, "missing")),
		opts:     inPlace(1),
		phases:   []v1alpha1.ClaimPhase{patching, pending},
		patch:    []string{"data-web-0"},
		messages: map[string]string{"data-web-1": "the StatefulSet controller creates it"},
	}, {
		name: "added and removed templates are reported, existing claims proceed",
		diff: diff.Result{
			Claims:         []diff.ClaimChange{claim("data", 0, "grow"), claim("wal", 0, "missing")},
			TemplatesAdded: []string{"wal"}, TemplatesRemoved: []string{"old"},
		},
		opts:     inPlace(1),
		phases:   []v1alpha1.ClaimPhase{patching, pending},
		patch:    []string{"data-web-0"},
		blocked:  []string{"templates added (reported, not acted on): wal", "templates removed (reported, not acted on): old"},
		messages: map[string]string{"wal-web-0": "its template was added"},
	}, {
		name:    "removed template with every claim compatible: done yet blocked",
		diff:    diff.Result{Claims: []diff.ClaimChange{claim("data", 0, "compatible")}, TemplatesRemoved: []string{"old"}},
		opts:    inPlace(1),
		phases:  []v1alpha1.ClaimPhase{compatible},
		done:    true,
		blocked: []string{"templates removed"},
	}, {
		name:   "max concurrency below 1 means 1",
		diff:   claims(claim("data", 0, "grow"), claim("data", 1, "grow")),
		opts:   inPlace(0),
		phases: []v1alpha1.ClaimPhase{pending, patching},
		patch:  []string{"data-web-1"},
	}, {
		name: "failure on a compatible claim is shown, not blocking",
		diff: claims(func() diff.ClaimChange {
			c := claim("data", 0, "oversized")
			c.ResizeError = "NodeResizeError: disk full"
			return c
		}()),
		opts:     inPlace(1),
		phases:   []v1alpha1.ClaimPhase{compatible},
		done:     true,
		messages: map[string]string{"data-web-0": "resize failed: NodeResizeError: disk full"},
	}, {
		name: "many failed claims are listed briefly",
		diff: claims(claim("data", 0, "failed"), claim("data", 1, "failed"), claim("data", 2, "failed"),
			claim("data", 3, "failed"), claim("data", 4, "failed")),
		opts:    inPlace(1),
		phases:  []v1alpha1.ClaimPhase{failed, failed, failed, failed, failed},
		blocked: []string{"data-web-0, data-web-1, data-web-2 and 2 more"},
	}, {
		name: "no claims: done",
		diff: diff.Result{},
		opts: inPlace(1),
		done: true,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := Build(tc.diff, tc.opts)
			var phases []v1alpha1.ClaimPhase
			for i, s := range p.Steps {
				phases = append(phases, s.Phase)
				if s.Claim.Name != tc.diff.Claims[i].Name {
					t.Errorf("step %d is %s, want diff order (%s)", i, s.Claim.Name, tc.diff.Claims[i].Name)
				}
				if want, ok := tc.messages[s.Claim.Name]; ok && !strings.Contains(s.Message, want) {
					t.Errorf("%s message %q does not contain %q", s.Claim.Name, s.Message, want)
				}
			}
			if !reflect.DeepEqual(phases, tc.phases) {
				t.Errorf("phases = %v, want %v", phases, tc.phases)
			}
			var patch []string
			for _, c := range p.Patch {
				patch = append(patch, c.Name)
			}
			if !reflect.DeepEqual(patch, tc.patch) {
				t.Errorf("patch = %v, want %v", patch, tc.patch)
			}
			if p.Done != tc.done {
				t.Errorf("Done = %v, want %v", p.Done, tc.done)
			}
			if len(tc.blocked) == 0 && p.Blocked != "" {
				t.Errorf("Blocked = %q, want empty", p.Blocked)
			}
			for _, want := range tc.blocked {
				if !strings.Contains(p.Blocked, want) {
					t.Errorf("Blocked = %q, does not contain %q", p.Blocked, want)
				}
			}
		})
	}
}

func TestBuildListsRestartsHighestOrdinalFirst(t *testing.T) {
	p := Build(claims(claim("data", 0, "offline"), claim("data", 2, "offline"), claim("logs", 2, "offline"), claim("data", 1, "compatible")),
		Options{Strategy: v1alpha1.InPlace, MaxConcurrent: 3})
	var got []string
	for _, c := range p.Restart {
		got = append(got, c.Name)
	}
	if want := []string{"data-web-2", "logs-web-2", "data-web-0"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Restart = %v, want %v", got, want)
	}
	if p.Done || p.Blocked != "" {
		t.Errorf("Done %v Blocked %q: claims waiting for a restart are neither done nor blocked", p.Done, p.Blocked)
	}
}
