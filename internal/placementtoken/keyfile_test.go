package placementtoken

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadKeyFile(t *testing.T) {
	raw := bytes.Repeat([]byte{0xfe, 0x01, 'k', 0x00}, 10) // 40 bytes, not base64
	rawLines := append(append(append([]byte{}, raw...), '\n'), raw...)
	secret32 := []byte("0123456789abcdef0123456789ABCDEF")
	next32 := []byte("fedcba9876543210FEDCBA9876543210")
	b64 := base64.StdEncoding.EncodeToString
	tests := []struct {
		name    string
		content []byte
		want    [][]byte
		wantErr string
	}{
		{"base64 with newline", []byte(b64(secret32) + "\n"), [][]byte{secret32}, ""},
		{"base64 without padding", []byte(base64.RawStdEncoding.EncodeToString(secret32)), [][]byte{secret32}, ""},
		{"raw bytes", raw, [][]byte{raw}, ""},
		{"raw bytes with a newline: one key", rawLines, [][]byte{rawLines}, ""},
		{"two keys, the first signs", []byte(b64(next32) + "\n\n" + b64(secret32) + "\n"), [][]byte{next32, secret32}, ""},
		{"second key too short", []byte(b64(secret32) + "\n" + b64([]byte("short")) + "\n"), nil, "line 2: 5 bytes of key material, need at least 32"},
		{"base64 of too few bytes", []byte(b64([]byte("short"))), nil, "5 bytes of key material, need at least 32"},
		{"too short raw", []byte("short!"), nil, "6 bytes of key material, need at least 32 (create it with: head -c 32 /dev/urandom | base64)"},
		{"empty", nil, nil, "0 bytes of key material"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "key")
			require.NoError(t, os.WriteFile(path, tc.content, 0o600))
			keys, err := ReadKeyFile(path)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "placement.keyFile "+path+": "+tc.wantErr)
				assert.NotContains(t, err.Error(), "short!", "key material never appears in errors")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, keys)
		})
	}
	_, err := ReadKeyFile(filepath.Join(t.TempDir(), "missing"))
	require.ErrorIs(t, err, os.ErrNotExist)
	assert.Contains(t, err.Error(), "placement.keyFile: open ")
}
