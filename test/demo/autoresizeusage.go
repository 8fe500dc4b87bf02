package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/test/fixtures"
	"github.com/claimwarden/claimwarden/test/storagesim"
)

// used is how full the story makes each volume: 88% of sizeBefore, over
// the shipped policy's autoresize_used_percent (80), and 44% of sizeAfter,
// under it, so that one pull request follows and no second one.
const used = "900Mi"

// usageTimeout bounds the wait for Prometheus to report the new usage: it
// scrapes every scrapeInterval.
const usageTimeout = 30 * time.Second

// fillVolumes sets how much each claim's volume holds, as an application
// writing data would (the simulator reports it as the kubelet does), and
// waits until Prometheus reports it, then prints what it reports.
func fillVolumes(ctx context.Context, cl *cluster, out *printer) error {
	out.step(fmt.Sprintf("The volumes fill up: %s of %s each", used, sizeBefore))
	out.note("The simulated kubelet reports the usage a claim's annotation sets; a real one measures the file system.")
	out.cmd(fmt.Sprintf("kubectl annotate pvc -n %s -l app=%s %s=%s", namespace, stsName, storagesim.UsedAnnotation, used))
	var list corev1.PersistentVolumeClaimList
	if err := cl.client.List(ctx, &list, client.InNamespace(namespace)); err != nil {
		return err
	}
	for i := range list.Items {
		pvc := &list.Items[i]
		patch := client.MergeFrom(pvc.DeepCopy())
		if pvc.Annotations == nil {
			pvc.Annotations = map[string]string{}
		}
		pvc.Annotations[storagesim.UsedAnnotation] = used
		if err := cl.client.Patch(ctx, pvc, patch); err != nil {
			return err
		}
	}
	return showUsage(ctx, cl, len(list.Items), resource.MustParse(used), out)
}

// volumeUsage is one claim's statistics as Prometheus reports them.
type volumeUsage struct{ used, capacity float64 }

// showUsage polls Prometheus until it reports at least want used on n
// claims, and prints its answer as a table.
func showUsage(ctx context.Context, cl *cluster, n int, want resource.Quantity, out *printer) error {
	api, err := cl.prom.NewClient()
	if err != nil {
		return err
	}
	prom := promv1.NewAPI(api)
	sel := fmt.Sprintf(`{namespace=%q}`, namespace)
	out.cmd(fmt.Sprintf("curl -s %s/api/v1/query --data-urlencode 'query=kubelet_volume_stats_used_bytes%s'", cl.prom.URL, sel))
	var usage map[string]volumeUsage
	err = wait.PollUntilContextTimeout(ctx, fixtures.Poll, usageTimeout, true, func(ctx context.Context) (bool, error) {
		if err := cl.alive(); err != nil {
			return false, err
		}
		usage = map[string]volumeUsage{}
		for _, q := range []struct {
			metric string
			set    func(*volumeUsage, float64)
		}{
			{"kubelet_volume_stats_used_bytes", func(u *volumeUsage, v float64) { u.used = v }},
			{"kubelet_volume_stats_capacity_bytes", func(u *volumeUsage, v float64) { u.capacity = v }},
		} {
			v, _, _, err := prom.Query(ctx, q.metric+sel, time.Now())
			if err != nil {
				return false, fmt.Errorf("querying Prometheus: %w", err)
			}
			vec, _ := v.(model.Vector)
			for _, s := range vec {
				pvc := string(s.Metric["persistentvolumeclaim"])
				u := usage[pvc]
				q.set(&u, float64(s.Value))
				usage[pvc] = u
			}
		}
		full := 0
		for _, u := range usage {
			if u.used >= float64(want.Value()) && u.capacity > 0 {
				full++
			}
		}
		return full == n, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for Prometheus to report %s used on %d claims (it reports %v): %w", want.String(), n, usage, err)
	}
	rows := [][]string{{"PVC", "Used", "Capacity", "Used %"}}
	for _, pvc := range slices.Sorted(maps.Keys(usage)) {
		u := usage[pvc]
		rows = append(rows, []string{pvc, quantityOf(u.used), quantityOf(u.capacity), strconv.FormatFloat(100*u.used/u.capacity, 'f', 1, 64) + "%"})
	}
	out.table(rows)
	out.note("The shipped autoresize policy grows a volume 80% full (autoresize_used_percent) to leave 30% free, by 1Gi at least.")
	return nil
}

// usedPercent is how full used makes a volume of size, as claimwarden's
// status.autoresize.usage writes it: "88%".
func usedPercent(size string) string {
	u, c := resource.MustParse(used), resource.MustParse(size)
	return fmt.Sprintf("%.0f%%", 100*float64(u.Value())/float64(c.Value()))
}

// quantityOf is a byte count as Kubernetes writes quantities: 900Mi, 1Gi.
func quantityOf(v float64) string {
	return resource.NewQuantity(int64(v), resource.BinarySI).String()
}
