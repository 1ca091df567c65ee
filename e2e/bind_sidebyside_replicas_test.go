package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/hack/devcerts/certgen"
)

// Three seedwarden replicas in TestBindSideBySide: the suite's process and
// two more on the same configuration (capacity reserved through the API
// server, one Lease), behind one round-robin address as a Service would
// put them. Each seedwarden phase starts the two, each gardener-scheduler
// phase stops them, as it stops the suite's.

// benchReplicas are the two extra processes and the address in front of
// all three.
type benchReplicas struct {
	sb    *sideBySide
	extra []*replica
	lb    *roundRobin
	reg   *webhookRegistration // the shipped webhooks, pointed at lb
	up    bool
}

// startReplicas starts the two extra replicas (the first time with their
// certificates, configurations and lb), waits until they are ready, and
// returns the registration that reaches all three.
func (sb *sideBySide) startReplicas() *webhookRegistration {
	t, st := sb.t, sb.st
	t.Helper()
	if sb.replicas == nil {
		ca, err := certgen.NewAuthority("seedwarden e2e bench replicas CA", time.Now())
		require.NoError(t, err)
		br := &benchReplicas{sb: sb}
		for _, name := range []string{"bench-replica-2", "bench-replica-3"} {
			br.extra = append(br.extra, st.startReplica(t, name, ca))
		}
		br.lb, err = startRoundRobin([]string{st.webhookAddr(), br.extra[0].webhookAddr(), br.extra[1].webhookAddr()})
		require.NoError(t, err)
		t.Cleanup(br.lb.Close)
		br.reg, err = sb.shipped.routedTo(br.lb.Addr(), append(slices.Clone(st.caBundle), ca.CertPEM...))
		require.NoError(t, err)
		sb.replicas = br
	} else if !sb.replicas.up {
		for _, r := range sb.replicas.extra {
			p, err := st.startProcess(filepath.Join(st.work, "config-"+r.name+".yaml"), r.logPath)
			require.NoError(t, err, "restarting %s", r.name)
			r.proc = p
		}
	}
	for _, r := range sb.replicas.extra {
		require.NoError(t, waitReplicaReady(r, time.Minute))
	}
	sb.replicas.up = true
	return sb.replicas.reg
}

// stop stops the extra replicas and logs how the connections were spread.
func (br *benchReplicas) stop() error {
	if !br.up {
		return nil
	}
	br.up = false
	br.sb.t.Logf("connections through the load balancer per replica so far: %v", br.lb.Connections())
	for _, r := range br.extra {
		if r.proc.Exited() {
			continue
		}
		code, _, err := r.proc.Stop(20 * time.Second)
		if err != nil {
			return fmt.Errorf("%s: %w", r.name, err)
		}
		if code != 0 {
			return fmt.Errorf("%s exited with %d on SIGTERM", r.name, code)
		}
	}
	return nil
}

func (br *benchReplicas) running() bool { return br.up }

// procs are the extra replicas' processes.
func (br *benchReplicas) procs() []*webhookProcess {
	var out []*webhookProcess
	for _, r := range br.extra {
		out = append(out, r.proc)
	}
	return out
}

func (br *benchReplicas) metricsURLs() []string {
	var out []string
	for _, r := range br.extra {
		out = append(out, r.metricsURL())
	}
	return out
}

// routedTo is reg with every webhook calling addr, trusting bundle.
func (reg *webhookRegistration) routedTo(addr string, bundle []byte) (*webhookRegistration, error) {
	out := reg.without()
	for i := range out.m.Webhooks {
		if err := pointClientConfig(&out.m.Webhooks[i].ClientConfig, addr, bundle); err != nil {
			return nil, fmt.Errorf("mutating webhook %s: %w", out.m.Webhooks[i].Name, err)
		}
	}
	for i := range out.v.Webhooks {
		if err := pointClientConfig(&out.v.Webhooks[i].ClientConfig, addr, bundle); err != nil {
			return nil, fmt.Errorf("validating webhook %s: %w", out.v.Webhooks[i].Name, err)
		}
	}
	return out, nil
}
