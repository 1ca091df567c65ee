package install

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/seedwarden/seedwarden/e2e/proc"
)

// The Prometheus server of the tests: built by hack/rules/promtool.sh (the
// version and tags of promtool), run as a process with a static scrape
// config that says what the ServiceMonitor says, and the shipped rules as
// they are. Queried through its HTTP API.

// promInterval is the scrape and rule evaluation interval of the tests'
// Prometheus. The ServiceMonitor scrapes every 30s; the rules' `for`
// durations are the shipped ones, and a shorter interval only makes the
// pending and firing states come at their `for` rather than up to a scrape
// interval later.
const promInterval = 2 * time.Second

// promServer is a running Prometheus.
type promServer struct {
	url  string
	proc *proc.Process
}

// promScrape is one scrape job of the config.
type promScrape struct {
	JobName        string            `json:"job_name"`
	Scheme         string            `json:"scheme,omitempty"`
	MetricsPath    string            `json:"metrics_path,omitempty"`
	ScrapeInterval string            `json:"scrape_interval,omitempty"`
	ScrapeTimeout  string            `json:"scrape_timeout,omitempty"`
	ProxyURL       string            `json:"proxy_url,omitempty"`
	Authorization  *promAuth         `json:"authorization,omitempty"`
	TLSConfig      *promTLS          `json:"tls_config,omitempty"`
	StaticConfigs  []promStatic      `json:"static_configs"`
	Params         map[string]string `json:"-"`
}

type promAuth struct {
	Type            string `json:"type"`
	CredentialsFile string `json:"credentials_file"`
}

type promTLS struct {
	CAFile     string `json:"ca_file,omitempty"`
	ServerName string `json:"server_name,omitempty"`
}

type promStatic struct {
	Targets []string          `json:"targets"`
	Labels  map[string]string `json:"labels,omitempty"`
}

// promConfig is Prometheus's configuration file: the jobs and one rule file.
func promConfig(rulesFile string, jobs []promScrape) ([]byte, error) {
	return yaml.Marshal(map[string]any{
		"global": map[string]string{
			"scrape_interval":     promInterval.String(),
			"scrape_timeout":      promInterval.String(),
			"evaluation_interval": promInterval.String(),
		},
		"rule_files":     []string{rulesFile},
		"scrape_configs": jobs,
	})
}

// startPrometheus runs binary with config in dir (its data and log there)
// and waits until it is ready; it stops when t ends.
func startPrometheus(ctx context.Context, t *testing.T, binary, dir string, config []byte) *promServer {
	t.Helper()
	cfgPath := filepath.Join(dir, "prometheus.yml")
	must(t, os.WriteFile(cfgPath, config, 0o600))
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	p, err := proc.Start(proc.Options{Name: "prometheus", Path: binary, Dir: dir, Log: filepath.Join(dir, "prometheus.log"),
		Args: []string{"--config.file=" + cfgPath, "--storage.tsdb.path=" + filepath.Join(dir, "data"), "--web.listen-address=" + addr}})
	must(t, err)
	s := &promServer{url: "http://" + addr, proc: p}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("prometheus log (all in %s):\n%s", p.LogPath(), p.Tail(40))
		}
		_, _, _ = p.Stop(15 * time.Second)
	})
	must(t, p.WaitFor(ctx, time.Minute, 100*time.Millisecond, func() error { return httpOK(probeClient, s.url+"/-/ready") }))
	return s
}

// api GETs /api/v1/<path> and decodes its data into out.
func (p *promServer) api(path string, q url.Values, out any) error {
	u := p.url + "/api/v1/" + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	resp, err := http.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var env struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return fmt.Errorf("%s: %w: %s", path, err, body)
	}
	if env.Status != "success" {
		return fmt.Errorf("%s: %s", path, env.Error)
	}
	return json.Unmarshal(env.Data, out)
}

// promSample is one element of an instant vector.
type promSample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

func (s promSample) float() float64 {
	str, _ := s.Value[1].(string)
	f, _ := strconv.ParseFloat(str, 64)
	return f
}

// query evaluates expr now.
func (p *promServer) query(expr string) ([]promSample, error) {
	var data struct {
		ResultType string       `json:"resultType"`
		Result     []promSample `json:"result"`
	}
	if err := p.api("query", url.Values{"query": {expr}}, &data); err != nil {
		return nil, err
	}
	if data.ResultType != "vector" {
		return nil, fmt.Errorf("query %s: a %s, not a vector", expr, data.ResultType)
	}
	return data.Result, nil
}

// promTarget is an active target.
type promTarget struct {
	Labels    map[string]string `json:"labels"`
	ScrapeURL string            `json:"scrapeUrl"`
	Health    string            `json:"health"`
	LastError string            `json:"lastError"`
}

func (p *promServer) targets() ([]promTarget, error) {
	var data struct {
		Active []promTarget `json:"activeTargets"`
	}
	err := p.api("targets", url.Values{"state": {"active"}}, &data)
	return data.Active, err
}

// target is the job's one target once it has been scraped at least once.
func (p *promServer) target(job string) (promTarget, error) {
	ts, err := p.targets()
	if err != nil {
		return promTarget{}, err
	}
	for _, t := range ts {
		if t.Labels["job"] == job {
			if t.Health == "unknown" {
				return t, fmt.Errorf("job %s not scraped yet", job)
			}
			return t, nil
		}
	}
	return promTarget{}, fmt.Errorf("no target of job %s among %d", job, len(ts))
}

// promRule is a rule as /api/v1/rules reports it.
type promRule struct {
	Name           string    `json:"name"`
	Type           string    `json:"type"`
	Health         string    `json:"health"`
	LastError      string    `json:"lastError"`
	State          string    `json:"state"`
	LastEvaluation time.Time `json:"lastEvaluation"`
	Alerts         []struct {
		Labels map[string]string `json:"labels"`
		State  string            `json:"state"`
	} `json:"alerts"`
}

func (p *promServer) rules() ([]promRule, error) {
	var data struct {
		Groups []struct {
			Name  string     `json:"name"`
			Rules []promRule `json:"rules"`
		} `json:"groups"`
	}
	if err := p.api("rules", nil, &data); err != nil {
		return nil, err
	}
	var out []promRule
	for _, g := range data.Groups {
		out = append(out, g.Rules...)
	}
	return out, nil
}

// alertState is the state of the alerting rule name: "inactive",
// "pending" or "firing".
func (p *promServer) alertState(name string) (string, error) {
	rules, err := p.rules()
	if err != nil {
		return "", err
	}
	for _, r := range rules {
		if r.Type == "alerting" && r.Name == name {
			return r.State, nil
		}
	}
	return "", fmt.Errorf("no alerting rule %s", name)
}

// waitAlert polls until the alert is in state, within timeout, and
// returns when it got there.
func (p *promServer) waitAlert(t *testing.T, name, state string, timeout time.Duration) time.Time {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for {
		got, err := p.alertState(name)
		if err == nil && got == state {
			return time.Now()
		}
		last = fmt.Sprintf("%s (%v)", got, err)
		if time.Now().After(deadline) {
			t.Fatalf("%s not %s within %s; last %s", name, state, timeout, last)
		}
		time.Sleep(promInterval / 2)
	}
}
