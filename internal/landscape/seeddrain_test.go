package landscape_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/seedwarden/seedwarden/internal/landscape"
	"github.com/seedwarden/seedwarden/internal/operationsapi"
)

// A SeedDrain in a landscape file is read strictly and checked as its CRD
// would check it.
func TestDecodeSeedDrain(t *testing.T) {
	tests := []struct {
		name, doc, wantErr string
	}{
		{"valid", "apiVersion: operations.seedwarden.io/v1alpha1\nkind: SeedDrain\nmetadata: {name: d}\nspec: {seedName: aws-eu1, budget: {maxInFlight: 2}}\n", ""},
		{"misspelt field", "apiVersion: operations.seedwarden.io/v1alpha1\nkind: SeedDrain\nmetadata: {name: d}\nspec: {seedName: aws-eu1, budget: {maxInflight: 2}}\n", "maxInflight"},
		{"budget out of range", "apiVersion: operations.seedwarden.io/v1alpha1\nkind: SeedDrain\nmetadata: {name: d}\nspec: {seedName: aws-eu1, budget: {maxInFlight: 0}}\n", "spec.budget.maxInFlight=0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := landscape.Decode([]byte(tt.doc))
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Len(t, objs, 1)
			d := objs[0].(*operationsapi.SeedDrain)
			assert.Equal(t, "aws-eu1", d.Spec.SeedName)
			assert.Equal(t, int32(2), d.Spec.Budget.MaxInFlightOrDefault())
		})
	}
}

// List reads SeedDrains where they are served, takes a garden without
// their CRD as one without SeedDrains, and still fails on a refusal.
func TestListSeedDrains(t *testing.T) {
	drain := &operationsapi.SeedDrain{ObjectMeta: metav1.ObjectMeta{Name: "d"}, Spec: operationsapi.SeedDrainSpec{SeedName: "aws-eu1"}}
	withDrain := func(funcs interceptor.Funcs) client.Client {
		c := listClient(t, funcs)
		require.NoError(t, c.Create(context.Background(), drain.DeepCopy()))
		return c
	}
	failDrains := func(err error) interceptor.Funcs {
		return interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, l client.ObjectList, opts ...client.ListOption) error {
			if _, ok := l.(*operationsapi.SeedDrainList); ok {
				return err
			}
			return c.List(ctx, l, opts...)
		}}
	}
	countDrains := func(objs []client.Object) int {
		n := 0
		for _, o := range objs {
			if _, ok := o.(*operationsapi.SeedDrain); ok {
				n++
				assert.Equal(t, operationsapi.KindSeedDrain, o.GetObjectKind().GroupVersionKind().Kind)
			}
		}
		return n
	}

	got, err := landscape.List(context.Background(), withDrain(interceptor.Funcs{}), "garden")
	require.NoError(t, err)
	assert.Equal(t, 1, countDrains(got))

	noCRD := &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: operationsapi.GroupName, Kind: operationsapi.KindSeedDrain}}
	got, err = landscape.List(context.Background(), withDrain(failDrains(noCRD)), "garden")
	require.NoError(t, err)
	assert.Equal(t, 0, countDrains(got))
	assert.NotEmpty(t, got)

	refused := errors.New("seeddrains.operations.seedwarden.io is forbidden")
	_, err = landscape.List(context.Background(), withDrain(failDrains(refused)), "garden")
	var le *landscape.ListError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, "seeddrains", le.Resource)
}
