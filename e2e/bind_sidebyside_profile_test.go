package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/client-go/rest"
)

// BenchProfilesEnv names a directory: with it set, TestBindSideBySide
// records a CPU profile of gardener-apiserver and one of kube-apiserver over
// the sending of each measured phase, as
// phase-<n>-<binder>-<component>.pprof (`go tool pprof -diff_base` compares
// two binders' phases). gardener-apiserver runs in the garden process, which
// then serves net/http/pprof on loopback (gardenPprofEnv); kube-apiserver
// serves /debug/pprof to the admin.
const BenchProfilesEnv = "SEEDWARDEN_E2E_BENCH_PROFILES"

// gardenPprofEnv is the garden program's variable for its pprof address
// (hack/gardener/cmd/garden).
const gardenPprofEnv = "GARDEN_PPROF_ADDR"

// burstProfileSeconds is how long a burst's profile lasts: the 300 CREATEs
// take 4–6 s to send here.
const burstProfileSeconds = 5

// gardenPprofAddr returns the loopback address for the garden's pprof
// server when BenchProfilesEnv is set, else "".
func gardenPprofAddr() (string, error) {
	if os.Getenv(BenchProfilesEnv) == "" {
		return "", nil
	}
	port, err := freePort()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("127.0.0.1:%d", port), nil
}

// phaseProfiles records the CPU profiles of one phase.
type phaseProfiles struct {
	wg   sync.WaitGroup
	errs []error
	mu   sync.Mutex
}

// profilePhase starts the profiles of phase n's sending (sc, binder b), or
// returns nil when BenchProfilesEnv is unset.
func (sb *sideBySide) profilePhase(n string, sc scenario, b binder) *phaseProfiles {
	dir := os.Getenv(BenchProfilesEnv)
	if dir == "" || sb.st.garden == nil || sb.st.garden.pprofAddr == "" {
		return nil
	}
	seconds := burstProfileSeconds
	if sc.sustained() {
		seconds = max(1, sc.shoots/sc.rate)
	}
	query := fmt.Sprintf("/debug/pprof/profile?seconds=%d", seconds)
	p := &phaseProfiles{}
	kube, err := rest.HTTPClientFor(sb.st.admin)
	if err != nil {
		p.errs = append(p.errs, err)
		return p
	}
	name := func(component string) string {
		return filepath.Join(dir, fmt.Sprintf("phase-%s-%s-%s.pprof", n, b, component))
	}
	p.fetch(http.DefaultClient, "http://"+sb.st.garden.pprofAddr+query, name(compGardenerAPIServer))
	p.fetch(kube, sb.st.admin.Host+query, name(compKubeAPIServer))
	return p
}

// fetch writes the profile url answers to path, in the background.
func (p *phaseProfiles) fetch(c *http.Client, url, path string) {
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		if err := fetchProfile(c, url, path); err != nil {
			p.mu.Lock()
			p.errs = append(p.errs, err)
			p.mu.Unlock()
		}
	}()
}

func fetchProfile(c *http.Client, url, path string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("profile %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("profile %s: %s", url, resp.Status)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("profile %s: %w", url, err)
	}
	return f.Close()
}

// wait waits for the phase's profiles and returns their errors.
func (p *phaseProfiles) wait() []error {
	if p == nil {
		return nil
	}
	p.wg.Wait()
	return p.errs
}
