package difftest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
)

// The oracle binaries in the bin directory, by the network rule each decides
// with (hack/gardener-bins.sh builds them from Gardener's own scheduler).
var oracleBinaries = map[string]string{
	"AllowIPv4": "decide",          // Gardener as it is
	"Disjoint":  "decide-disjoint", // seed and shoot networks may not intersect at all
}

// Oracle decides scenarios with Gardener's scheduler.
type Oracle struct {
	// BinDir holds the oracle binaries.
	BinDir string
}

// Decide has every scenario decided, one process per network rule for the
// whole batch, and returns the answers by scenario name. A scenario the
// oracle did not answer, or an answer that does not parse, is an error.
func (o Oracle) Decide(ctx context.Context, scenarios []Scenario) (map[string]Answer, error) {
	byMode := map[string][]Scenario{}
	for _, sc := range scenarios {
		if _, ok := oracleBinaries[sc.NetworkOverlap]; !ok {
			return nil, fmt.Errorf("scenario %s: networkOverlap: unsupported value %q", sc.Name, sc.NetworkOverlap)
		}
		byMode[sc.NetworkOverlap] = append(byMode[sc.NetworkOverlap], sc)
	}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		answers = map[string]Answer{}
		errs    []error
	)
	for mode, batch := range byMode {
		wg.Go(func() {
			got, err := o.run(ctx, oracleBinaries[mode], batch)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
			}
			for _, a := range got {
				answers[a.Name] = a
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for _, sc := range scenarios {
		if _, ok := answers[sc.Name]; !ok {
			return nil, fmt.Errorf("oracle gave no answer for scenario %s", sc.Name)
		}
	}
	return answers, nil
}

// run feeds one batch to one oracle process.
func (o Oracle) run(ctx context.Context, binary string, batch []Scenario) ([]Answer, error) {
	path := filepath.Join(o.BinDir, binary)
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("oracle binary %s: %w (build it with: bash hack/gardener-bins.sh)", path, err)
	}
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	for _, sc := range batch {
		sc.Expect = nil // the oracle is asked, not told
		if err := enc.Encode(sc); err != nil {
			return nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
		}
	}
	cmd := exec.CommandContext(ctx, path)
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("oracle %s: %w", path, err)
	}
	answers, readErr := readAnswers(out)
	// Read to the end even after a bad line, or the oracle blocks on a full
	// pipe until the context kills it.
	_, _ = io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("oracle %s: %w: %s", path, err, tail(stderr.Bytes()))
	}
	if readErr != nil {
		return nil, fmt.Errorf("oracle %s: %w", path, readErr)
	}
	return answers, nil
}

func readAnswers(r interface{ Read([]byte) (int, error) }) ([]Answer, error) {
	var answers []Answer
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var a Answer
		if err := json.Unmarshal(line, &a); err != nil {
			return nil, fmt.Errorf("answer %d does not parse: %w: %s", len(answers), err, tail(line))
		}
		if a.Name == "" {
			return nil, fmt.Errorf("answer %d has no name: %s", len(answers), tail(line))
		}
		answers = append(answers, a)
	}
	return answers, sc.Err()
}

// tail keeps the end of an error output, where the reason usually is.
func tail(b []byte) string {
	const keep = 2000
	if len(b) > keep {
		b = b[len(b)-keep:]
	}
	return string(bytes.TrimSpace(b))
}
