package config

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadKey(t *testing.T) {
	raw := bytes.Repeat([]byte{0xfe, 0x01, 'k', 0x00}, 10) // 40 bytes, not base64
	secret32 := []byte("0123456789abcdef0123456789ABCDEF")
	tests := []struct {
		name    string
		content []byte
		want    []byte
		wantErr string
	}{
		{"base64 with newline", []byte(base64.StdEncoding.EncodeToString(secret32) + "\n"), secret32, ""},
		{"base64 without padding", []byte(base64.RawStdEncoding.EncodeToString(secret32)), secret32, ""},
		{"raw bytes", raw, raw, ""},
		{"base64 of too few bytes", []byte(base64.StdEncoding.EncodeToString([]byte("short"))), nil, "5 bytes of key material, need at least 32"},
		{"too short raw", []byte("short!"), nil, "6 bytes of key material, need at least 32 (create it with: head -c 32 /dev/urandom | base64)"},
		{"empty", nil, nil, "0 bytes of key material"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "key")
			require.NoError(t, os.WriteFile(path, tc.content, 0o600))
			key, err := Placement{KeyFile: path}.ReadKey()
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "placement.keyFile "+path+": "+tc.wantErr)
				assert.NotContains(t, err.Error(), "short!", "key material never appears in errors")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, key)
		})
	}
	_, err := Placement{KeyFile: filepath.Join(t.TempDir(), "missing")}.ReadKey()
	require.ErrorIs(t, err, os.ErrNotExist)
	assert.Contains(t, err.Error(), "placement.keyFile: open ")
}
