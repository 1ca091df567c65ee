package seedreserve

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BenchmarkLedgerUpdateByEntries: what kube-apiserver spends on one UPDATE
// of a seed's reservation ConfigMap by the number of entries it holds, with
// one data key per entry (the format) against the same entries in one key,
// and the format with its managedFields dropped as the Reserver's writes drop
// them. Each UPDATE adds an entry and drops the oldest, as a write of the
// ledger does. It answered whether a compact format was worth a format
// migration (BENCHMARKS.md §37), and measures dropping managedFields instead
// (§38).
func BenchmarkLedgerUpdateByEntries(b *testing.B) {
	cfg, ns := apiServer(b)
	c, err := NewClient(cfg)
	require.NoError(b, err)
	stat := apiServerStat(b, cfg.Host)
	ctx := context.Background()
	value := func(i int) string {
		return fmt.Sprintf("2026-12-02T04:00:%02d.123Z;5c1e0000-1111-2222-3333-%012d", i%60, i)
	}
	for _, entries := range []int{2, 67, 167} {
		for _, variant := range []string{"one-per-entry", "one", "one-per-entry-untracked"} {
			compact, untracked := variant == "one", variant == "one-per-entry-untracked"
			name := fmt.Sprintf("entries=%d/keys=%s", entries, variant)
			b.Run(name, func(b *testing.B) {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "ledger-size-"}}
				require.NoError(b, c.Create(ctx, cm))
				cpu := stat()
				b.ResetTimer()
				for i := range b.N {
					cm.Data = ledgerData(entries, i, compact, value)
					if untracked {
						cm.ManagedFields = resetManagedFields()
					}
					if err := c.Update(ctx, cm); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				b.ReportMetric((stat()-cpu)/float64(b.N), "apiserver-cpu-ms/op")
			})
		}
	}
}

// ledgerData is a ConfigMap's data of n entries, the first being the i-th:
// one key per entry, or all of them in one key, a line each.
func ledgerData(n, i int, compact bool, value func(int) string) map[string]string {
	data := make(map[string]string, n)
	var all strings.Builder
	for j := i; j < i+n; j++ {
		key := fmt.Sprintf("garden-ns%d.shoot-%d", j%10, j)
		if compact {
			all.WriteString(key + "=" + value(j) + "\n")
			continue
		}
		data[key] = value(j)
	}
	if compact {
		data["entries"] = all.String()
	}
	return data
}

// apiServerStat returns a reader of the CPU (user and system, in ms) the
// kube-apiserver serving host has used: the process whose command line has
// its --secure-port.
func apiServerStat(tb testing.TB, host string) func() float64 {
	tb.Helper()
	u, err := url.Parse(host)
	require.NoError(tb, err)
	flag := []byte("--secure-port=" + u.Port())
	procs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	require.NoError(tb, err)
	for _, p := range procs {
		cmd, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(cmd, []byte("kube-apiserver")) || !bytes.Contains(cmd, flag) {
			continue
		}
		statFile := filepath.Join(filepath.Dir(p), "stat")
		return func() float64 {
			raw, err := os.ReadFile(statFile)
			require.NoError(tb, err)
			// The fields after the command name, which may hold spaces:
			// utime and stime are the 12th and 13th, in clock ticks (100 Hz).
			f := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+1:]))
			utime, err1 := strconv.ParseFloat(f[11], 64)
			stime, err2 := strconv.ParseFloat(f[12], 64)
			require.NoError(tb, err1)
			require.NoError(tb, err2)
			return (utime + stime) * 10
		}
	}
	tb.Skipf("no kube-apiserver process with %s", flag)
	return nil
}
