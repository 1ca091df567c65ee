package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seedwarden/seedwarden/internal/api"
)

// Seed usage as the API server and the webhook see it, and the Prometheus
// text format both servers' /metrics speak.

// expectedUsage counts Shoots per seed from the API server as docs/design.md
// defines usage: spec.seedName, plus status.seedName when it differs.
func (st *suite) expectedUsage(ctx context.Context) (map[string]int64, error) {
	var shoots api.ShootList
	if err := st.c.List(ctx, &shoots); err != nil {
		return nil, err
	}
	var seeds api.SeedList
	if err := st.c.List(ctx, &seeds); err != nil {
		return nil, err
	}
	u := map[string]int64{}
	for _, sd := range seeds.Items {
		u[sd.Name] = 0
	}
	for _, sh := range shoots.Items {
		if sh.Spec.SeedName != nil && *sh.Spec.SeedName != "" {
			if _, ok := u[*sh.Spec.SeedName]; ok {
				u[*sh.Spec.SeedName]++
			}
		}
		if sh.Status.SeedName != nil && *sh.Status.SeedName != "" &&
			(sh.Spec.SeedName == nil || *sh.Spec.SeedName != *sh.Status.SeedName) {
			if _, ok := u[*sh.Status.SeedName]; ok {
				u[*sh.Status.SeedName]++
			}
		}
	}
	return u, nil
}

// webhookUsage is seedwarden_seed_charged_shoots from the webhook's metrics endpoint.
func (st *suite) webhookUsage() (map[string]int64, error) {
	samples, err := scrape(st.metricsURL())
	if err != nil {
		return nil, err
	}
	u := map[string]int64{}
	for _, smp := range samples {
		if smp.name == "seedwarden_seed_charged_shoots" {
			u[smp.labels["seed"]] = int64(smp.value)
		}
	}
	return u, nil
}

// cacheMatches says why the webhook's usage differs from the API server's
// Shoots, or nil.
func (st *suite) cacheMatches(ctx context.Context) error {
	want, err := st.expectedUsage(ctx)
	if err != nil {
		return err
	}
	got, err := st.webhookUsage()
	if err != nil {
		return err
	}
	var diffs []string
	for seed, w := range want {
		if got[seed] != w {
			diffs = append(diffs, fmt.Sprintf("%s: webhook %d, API server %d", seed, got[seed], w))
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 0 {
		return fmt.Errorf("seed usage differs: %s", strings.Join(diffs, "; "))
	}
	return nil
}

// waitSettled waits until the webhook's cache agrees with the API server
// about every seed's usage (watch events delivered, reservations released).
func (st *suite) waitSettled(t *testing.T) {
	t.Helper()
	eventually(t, 15*time.Second, func() error { return st.cacheMatches(context.Background()) },
		"the webhook's cache did not catch up with the API server")
}

type sample struct {
	name   string
	labels map[string]string
	value  float64
}

func scrape(url string) ([]sample, error) {
	resp, err := probeClient.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(resp.Body); err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return parseMetrics(b.String())
}

// apiserverMetrics scrapes the API server's /metrics as the admin.
func (st *suite) apiserverMetrics(ctx context.Context) ([]sample, error) {
	raw, err := st.cs.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	return parseMetrics(string(raw))
}

// parseMetrics reads the Prometheus text format (what both servers serve).
func parseMetrics(text string) ([]sample, error) {
	var out []sample
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		smp := sample{labels: map[string]string{}}
		rest := line
		if i := strings.IndexAny(line, "{ "); i >= 0 && line[i] == '{' {
			smp.name = line[:i]
			var err error
			if rest, err = parseLabels(line[i+1:], smp.labels); err != nil {
				return nil, fmt.Errorf("%q: %w", line, err)
			}
		} else if i >= 0 {
			smp.name, rest = line[:i], line[i:]
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			return nil, fmt.Errorf("%q: no value", line)
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", line, err)
		}
		smp.value = v
		out = append(out, smp)
	}
	return out, nil
}

// parseLabels reads `a="x",b="y"}` into into and returns what follows `}`.
func parseLabels(s string, into map[string]string) (string, error) {
	for {
		s = strings.TrimLeft(s, ", ")
		if strings.HasPrefix(s, "}") {
			return s[1:], nil
		}
		eq := strings.IndexByte(s, '=')
		if eq < 0 || len(s) < eq+2 || s[eq+1] != '"' {
			return "", errors.New("bad label")
		}
		key := s[:eq]
		s = s[eq+2:]
		var val strings.Builder
		for {
			if s == "" {
				return "", errors.New("unterminated label value")
			}
			c := s[0]
			s = s[1:]
			if c == '\\' && s != "" {
				switch s[0] {
				case 'n':
					val.WriteByte('\n')
				default:
					val.WriteByte(s[0])
				}
				s = s[1:]
				continue
			}
			if c == '"' {
				break
			}
			val.WriteByte(c)
		}
		into[key] = val.String()
	}
}

// counterSum adds the values of name's samples whose labels match all of match.
func counterSum(samples []sample, name string, match func(map[string]string) bool) float64 {
	var sum float64
	for _, smp := range samples {
		if smp.name == name && (match == nil || match(smp.labels)) {
			sum += smp.value
		}
	}
	return sum
}

// leaderStatus is leader_election_master_status of the retry controller's
// Lease in a webhook's metrics (0 when absent).
func leaderStatus(samples []sample) float64 {
	return counterSum(samples, "leader_election_master_status", func(l map[string]string) bool {
		return l["name"] == "seedwarden-pending-shoots"
	})
}
