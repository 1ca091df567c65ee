package config

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestManagedFieldsSizeRules(t *testing.T) {
	const shoots = `apiGroups: [core.gardener.cloud], apiVersions: ["*"], resources: [shoots]`
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"resourceSize ok", `resourceSize: {limits: [{` + shoots + `, size: 8Ki, managedFieldsSize: 32Ki}]}`, ""},
		{"resourceSize garbage", `resourceSize: {limits: [{` + shoots + `, size: 8Ki, managedFieldsSize: lots}]}`,
			`resourceSize.limits[0].managedFieldsSize: invalid value "lots" (want a quantity of bytes such as 64Ki)`},
		{"resourceSize zero", `resourceSize: {limits: [{` + shoots + `, size: 8Ki, managedFieldsSize: "0"}]}`,
			`resourceSize.limits[0].managedFieldsSize: "0" must be positive`},
		{"resourceSize negative", `resourceSize: {limits: [{` + shoots + `, size: 8Ki, managedFieldsSize: -1Ki}]}`,
			`resourceSize.limits[0].managedFieldsSize: "-1Ki" must be positive`},
		{"resourceAdmission ok", `resourceAdmission: {limits: [{` + shoots + `, size: 8Ki, managedFieldsSize: 32Ki}]}`, ""},
		{"resourceAdmission number", `resourceAdmission: {limits: [{` + shoots + `, size: 8Ki, managedFieldsSize: 32768}]}`, ""},
		{"resourceAdmission garbage", `resourceAdmission: {limits: [{` + shoots + `, size: 8Ki, managedFieldsSize: lots}]}`,
			`resourceAdmission.limits[0].managedFieldsSize: invalid value "lots" (want a quantity of bytes such as 64Ki)`},
		{"resourceAdmission zero", `resourceAdmission: {limits: [{` + shoots + `, size: 8Ki, managedFieldsSize: 0}]}`,
			`resourceAdmission.limits[0].managedFieldsSize: "0" must be positive`},
		{"resourceAdmission without size", `resourceAdmission: {limits: [{apiGroups: [core.gardener.cloud], apiVersions: ["*"], resources: [seeds], count: 3, managedFieldsSize: 32Ki}]}`,
			`resourceAdmission.limits[0].managedFieldsSize: needs size`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(header + tc.yaml + "\n"))
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestManagedFieldsBytes(t *testing.T) {
	q := func(s string) *Quantity {
		var v Quantity
		require.NoError(t, v.UnmarshalJSON([]byte(`"`+s+`"`)))
		return &v
	}
	for _, tc := range []struct {
		name  string
		limit SizeLimit
		entry ResourceLimit
		want  int64
	}{
		{"twice the size", SizeLimit{Size: "100Ki"}, ResourceLimit{Size: q("100Ki")}, 200 << 10},
		{"at least the floor", SizeLimit{Size: "1Ki"}, ResourceLimit{Size: q("1Ki")}, MinManagedFieldsSize},
		{"the floor is where twice the size reaches it", SizeLimit{Size: "8Ki"}, ResourceLimit{Size: q("8Ki")}, 16 << 10},
		{"configured wins, also below the default", SizeLimit{Size: "100Ki", ManagedFieldsSize: "4Ki"}, ResourceLimit{Size: q("100Ki"), ManagedFieldsSize: q("4Ki")}, 4 << 10},
		{"no overflow", SizeLimit{Size: "8E"}, ResourceLimit{Size: q("8E")}, math.MaxInt64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := tc.limit.ManagedFieldsBytes()
			require.NoError(t, err)
			assert.Equal(t, tc.want, n, "resourceSize")
			assert.Equal(t, tc.want, tc.entry.ManagedFieldsBytes(), "resourceAdmission")
		})
	}
	assert.Zero(t, ResourceLimit{}.ManagedFieldsBytes(), "an entry without size limits no managedFields")
}
