package placementtoken

import (
	"encoding/base64"
	"fmt"
	"os"
	"strings"
)

// ReadKeyFile reads the key file the configuration names
// (placement.keyFile): one key, or several, one per line, of which the first
// signs placement tokens and every one verifies them (key rotation: see
// NewSigner). A key in base64 (standard alphabet, with or without padding,
// surrounding whitespace ignored) is decoded, such as the output of
// `head -c 32 /dev/urandom | base64`. A file whose lines are not all base64
// is one key of raw bytes. Every key must have at least MinKeyBytes. Errors
// never contain key material.
func ReadKeyFile(path string) ([][]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("placement.keyFile: %w", err)
	}
	keys, ok := decodeKeyLines(data)
	if !ok {
		keys = [][]byte{decodeKey(data)}
	}
	for i, key := range keys {
		if len(key) < MinKeyBytes {
			at := ""
			if len(keys) > 1 {
				at = fmt.Sprintf("line %d: ", i+1)
			}
			return nil, fmt.Errorf("placement.keyFile %s: %s%d bytes of key material, need at least %d (create it with: head -c 32 /dev/urandom | base64)",
				path, at, len(key), MinKeyBytes)
		}
	}
	return keys, nil
}

// decodeKeyLines decodes a file of several base64 keys, one per line (blank
// lines ignored); false if it has fewer than two or a line is not base64.
func decodeKeyLines(data []byte) ([][]byte, bool) {
	var keys [][]byte
	for _, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		key, ok := decodeBase64(line)
		if !ok {
			return nil, false
		}
		keys = append(keys, key)
	}
	return keys, len(keys) > 1
}

func decodeKey(data []byte) []byte {
	if key, ok := decodeBase64(string(data)); ok {
		return key
	}
	return data
}

// decodeBase64 decodes text, surrounding whitespace ignored, with or
// without padding; false if it is empty or not base64.
func decodeBase64(text string) ([]byte, bool) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, false
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding} {
		if key, err := enc.DecodeString(text); err == nil {
			return key, true
		}
	}
	return nil, false
}
