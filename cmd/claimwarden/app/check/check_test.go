package check

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/claimwarden/claimwarden/integrations/commitstatus"
	"github.com/claimwarden/claimwarden/integrations/githost"
	"github.com/claimwarden/claimwarden/integrations/manifests"
	"github.com/claimwarden/claimwarden/policies"
)

func TestBaseClaim(t *testing.T) {
	vac := "gold"
	tmpl := corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Labels: map[string]string{"team": "db"}, Annotations: map[string]string{"backup": "daily"}},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:               []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			VolumeAttributesClassName: &vac,
			Resources:                 corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}},
		},
	}
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Spec: appsv1.StatefulSetSpec{
			Selector:             &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{tmpl},
		},
	}
	pvc := baseClaim(sts, &sts.Spec.VolumeClaimTemplates[0], 3, "standard")
	if pvc.Namespace != "shop" || pvc.Name != "data-web-3" {
		t.Errorf("claim %s/%s, want shop/data-web-3", pvc.Namespace, pvc.Name)
	}
	if pvc.Labels["team"] != "db" || pvc.Labels["app"] != "web" || pvc.Annotations["backup"] != "daily" {
		t.Errorf("labels %v, annotations %v: want the template's plus the selector's labels", pvc.Labels, pvc.Annotations)
	}
	if pvc.Spec.StorageClassName == nil || *pvc.Spec.StorageClassName != "standard" {
		t.Errorf("class %v, want the default class filled in", pvc.Spec.StorageClassName)
	}
	if pvc.Status.Phase != corev1.ClaimBound || pvc.Status.Capacity.Storage().String() != "10Gi" || pvc.Status.CurrentVolumeAttributesClassName == nil || *pvc.Status.CurrentVolumeAttributesClassName != "gold" {
		t.Errorf("status %+v, want Bound, capacity 10Gi, current class gold", pvc.Status)
	}
	pvc.Labels["extra"] = "x"
	if _, leaked := tmpl.Labels["extra"]; leaked || len(sts.Spec.VolumeClaimTemplates[0].Labels) != 1 {
		t.Error("the synthesized claim shares its labels with the template")
	}
}

func TestDefaultClass(t *testing.T) {
	objs, err := manifests.Decode(strings.NewReader(`apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: zeta, annotations: {storageclass.kubernetes.io/is-default-class: "true"}}
provisioner: x
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: alpha, annotations: {storageclass.kubernetes.io/is-default-class: "true"}}
provisioner: x
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: plain}
provisioner: x
allowVolumeExpansion: true
`), "sc.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cur := newCurrent()
	if err := cur.addClusterObjects(objs); err != nil {
		t.Fatal(err)
	}
	if got := cur.defaultClass(); got != "alpha" {
		t.Errorf("default class %q, want alpha, the first of two by name", got)
	}
	if sc := cur.storageClasses["plain"]; sc == nil || sc.AllowVolumeExpansion == nil || !*sc.AllowVolumeExpansion {
		t.Errorf("StorageClass plain = %+v, want allowVolumeExpansion true", sc)
	}
}

func TestResolveHost(t *testing.T) {
	configured := []githost.Host{{URL: "https://git.example.com/gitea", Type: githost.Gitea}}
	cases := []struct {
		repo     string
		hostType githost.HostType
		wantURL  string
		wantType githost.HostType
		wantErr  string
	}{
		{"https://github.com/o/r.git", "", "https://github.com", githost.GitHub, ""},
		{"git@git.example.com:o/r.git", "", "https://git.example.com/gitea", githost.Gitea, ""},
		{"http://127.0.0.1:3000/o/r.git", githost.Gitea, "http://127.0.0.1:3000", githost.Gitea, ""},
		{"ssh://git@code.example.org:2222/o/r.git", githost.GitLab, "https://code.example.org", githost.GitLab, ""},
		{"https://code.example.org/o/r", "", "", "", "no Git host is known for code.example.org"},
		{"not a url", "", "", "", "repository URL"},
	}
	for _, c := range cases {
		h, _, err := ResolveHost(c.repo, configured, c.hostType, "secret")
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("ResolveHost(%s) = %+v, %v; want an error containing %q", c.repo, h, err, c.wantErr)
			}
			continue
		}
		if err != nil || h.URL != c.wantURL || h.Type != c.wantType || h.Token != "secret" {
			t.Errorf("ResolveHost(%s) = %+v, %v; want %s %s with the token", c.repo, h, err, c.wantType, c.wantURL)
		}
	}
}

func TestMarkdownEscapesAndBounds(t *testing.T) {
	r := &Report{Mode: ModeCluster, Summary: Summary{Verdict: Denied}}
	st := StatefulSet{Namespace: "shop", Name: "web", Status: StatusChanged, Verdict: Denied}
	for i := range markdownMaxRows + 5 {
		st.Claims = append(st.Claims, Claim{Name: "data-web-" + string(rune('a'+i%26)), From: "1Gi", To: "2Gi", Verdict: Allowed})
	}
	st.Claims[len(st.Claims)-1] = Claim{Name: "data-web-z", From: "1Gi", To: "9Gi", Verdict: Denied,
		Denials: []policies.Reason{{Policy: "org", Message: "a | b\nc <script>"}}}
	r.StatefulSets = []StatefulSet{st}
	md := Markdown(r)
	// The denial comes first, whatever its place in the plan, escaped.
	first := strings.SplitN(md, "|---|---|---|---|---|---|\n", 2)[1]
	if want := "| `shop/web` | `data-web-z` | 1Gi | 9Gi | ❌ denied | org: a \\| b<br>c \\<script\\> |\n"; !strings.HasPrefix(first, want) {
		t.Errorf("first row:\n%s\nwant:\n%s", strings.SplitN(first, "\n", 2)[0], want)
	}
	if !strings.Contains(md, "… and 5 more;") || strings.Count(md, "\n| `shop/web`") != markdownMaxRows {
		t.Errorf("the table must stop at %d rows and say how many it left out:\n%s", markdownMaxRows, md[len(md)-400:])
	}
}

func TestMarkdownCode(t *testing.T) {
	for in, want := range map[string]string{
		"shop/web":   "`shop/web`",
		"a`b":        "``a`b``",
		"`a``":       "``` `a`` ```",
		"a|b\nc\x1b": "`a\\|b\\nc\\x1b`",
	} {
		if got := markdownCode(in); got != want {
			t.Errorf("markdownCode(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestBaseStateBoundsClaims(t *testing.T) {
	objs, err := manifests.Decode(strings.NewReader(`apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web, namespace: shop}
spec:
  replicas: 2147483647
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {resources: {requests: {storage: 1Gi}}}
`), "web.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sets, _, err := manifests.StatefulSets(objs)
	if err != nil {
		t.Fatal(err)
	}
	if err := newCurrent().addBase(sets[0], nil); err == nil || !strings.Contains(err.Error(), "web.yaml:1): spec.replicas: 2147483647 replicas of 1 templates stand for 2147483647 claims, more than the 10000") {
		t.Errorf("addBase = %v, want an error naming spec.replicas and the bound", err)
	}
}

// flaky answers the first posts with a rate limit, then accepts.
type flaky struct {
	limited int
	posts   []commitstatus.Status
}

func (f *flaky) Post(_ context.Context, _ githost.Repository, _ string, s commitstatus.Status) error {
	f.posts = append(f.posts, s)
	if len(f.posts) <= f.limited {
		return &githost.RateLimitError{RetryAfter: time.Millisecond, Err: errors.New("429")}
	}
	return nil
}

func TestPostStatusesRetriesRateLimits(t *testing.T) {
	r := &Report{StatefulSets: []StatefulSet{
		{Name: "unchanged"},
		{Name: "web", CommitStatus: &CommitStatus{Context: "claimwarden/shop/web", State: "success", Description: "allowed"}},
	}}
	p := &flaky{limited: 2}
	if err := PostStatuses(context.Background(), r, p, githost.Repository{}, "abc", "https://ci/1"); err != nil {
		t.Fatal(err)
	}
	if len(p.posts) != 3 || p.posts[2].Context != "claimwarden/shop/web" || p.posts[2].TargetURL != "https://ci/1" {
		t.Errorf("posts = %+v, want the one status posted three times (two rate-limited)", p.posts)
	}
	p = &flaky{limited: maxPostAttempts}
	err := PostStatuses(context.Background(), r, p, githost.Repository{}, "abc", "")
	if err == nil || !strings.Contains(err.Error(), "commit status claimwarden/shop/web: rate limited") || len(p.posts) != maxPostAttempts {
		t.Errorf("after %d rate-limited posts: %v (%d posts), want the error naming the context", maxPostAttempts, err, len(p.posts))
	}
}

func TestTableColour(t *testing.T) {
	r := &Report{Summary: Summary{Verdict: Denied, Changed: 1, Claims: 2, Allowed: 1, Denied: 1}, StatefulSets: []StatefulSet{{
		Namespace: "shop", Name: "web", Status: StatusChanged, Verdict: Denied,
		Claims: []Claim{
			{Name: "data-web-0", From: "1Gi", To: "2Gi", Verdict: Allowed},
			{Name: "data-web-1", From: "1Gi", To: "9Gi", Verdict: Denied, Denials: []policies.Reason{{Policy: "max-step", Message: "too far"}}},
		},
	}}}
	var plain, colour strings.Builder
	if err := Write(&plain, r, FormatTable, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := Write(&colour, r, FormatTable, WriteOptions{Colour: true}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "\x1b") {
		t.Errorf("plain table has escape sequences:\n%q", plain.String())
	}
	for _, want := range []string{"  " + green + "allowed" + reset + "\n", "  " + red + "denied" + reset + "   max-step: too far\n", red + "denied" + reset + ": 1 StatefulSet changes"} {
		if !strings.Contains(colour.String(), want) {
			t.Errorf("coloured table lacks %q:\n%q", want, colour.String())
		}
	}
	// Colour changes no column: without the escapes both tables are the same.
	stripped := strings.NewReplacer(red, "", green, "", yellow, "", reset, "").Replace(colour.String())
	if stripped != plain.String() {
		t.Errorf("coloured table, escapes removed:\n%s\nplain:\n%s", stripped, plain.String())
	}
}
