package seedreserve

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

func TestConfig(t *testing.T) {
	var c Config
	c.ApplyDefaults()
	assert.Equal(t, CoordinationLocal, c.Coordination)
	assert.False(t, c.APIServer())
	assert.Empty(t, c.Validate("capacity"))

	require.NoError(t, yaml.UnmarshalStrict([]byte("coordination: apiserver\nreservationNamespace: seedwarden\n"), &c))
	c.ApplyDefaults()
	assert.True(t, c.APIServer())
	assert.Empty(t, c.Validate("capacity"))

	for _, tc := range []struct {
		c    Config
		want []string
	}{
		{Config{Coordination: "etcd"}, []string{`capacity.coordination: unsupported value "etcd" (want local or apiserver)`}},
		{Config{Coordination: "APIServer"}, []string{`capacity.coordination: unsupported value "APIServer" (want local or apiserver)`}},
		{Config{Coordination: CoordinationAPIServer, ReservationNamespace: "Not_A_Namespace"}, []string{
			`capacity.reservationNamespace: invalid value "Not_A_Namespace": a lowercase RFC 1123 label must consist of`,
		}},
	} {
		got := tc.c.Validate("capacity")
		require.Len(t, got, len(tc.want), "%v", got)
		for i := range got {
			assert.Contains(t, got[i], tc.want[i])
		}
	}
}

func TestConfigNamespace(t *testing.T) {
	pod := func(ns string) func() string { return func() string { return ns } }

	ns, err := Config{ReservationNamespace: "explicit"}.Namespace(pod("seedwarden"))
	require.NoError(t, err)
	assert.Equal(t, "explicit", ns)

	ns, err = Config{}.Namespace(pod(" seedwarden\n"))
	require.NoError(t, err)
	assert.Equal(t, "seedwarden", ns)

	_, err = Config{}.Namespace(pod(""))
	require.EqualError(t, err, "capacity.reservationNamespace: required with coordination apiserver when $POD_NAMESPACE is not set and the pod's namespace is unknown")
	_, err = Config{}.Namespace(nil)
	require.Error(t, err)
	_, err = Config{}.Namespace(pod("Bad"))
	require.ErrorContains(t, err, `the pod's namespace "Bad" is not valid`)
}

func TestPodNamespace(t *testing.T) {
	t.Setenv(PodNamespaceEnv, "from-env")
	assert.Equal(t, "from-env", PodNamespace())
}
