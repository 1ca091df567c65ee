package install

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// volumeSync keeps one Secret or ConfigMap volume's folder as the kubelet
// does: files are links dir/<key> -> ..data/<key>, ..data a link to a
// timestamped folder; an update writes a new folder and swaps ..data with one
// rename, so a reader sees the old files or the new ones, never a mix.
type volumeSync struct {
	e         *env
	namespace string
	vol       corev1.Volume
	dir       string
	current   map[string][]byte // path -> content now in place
}

// loop syncs every volumeSyncPeriod until stop closes. A failed read is
// retried at the next tick (an API server restart, say).
func (v *volumeSync) loop(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-time.After(volumeSyncPeriod):
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = v.sync(ctx)
		cancel()
	}
}

// sync reads the object and writes its files when they changed.
func (v *volumeSync) sync(ctx context.Context) error {
	files, err := v.files(ctx)
	if err != nil {
		return err
	}
	if v.current != nil && maps.EqualFunc(files, v.current, bytes.Equal) {
		return nil
	}
	if err := v.write(files); err != nil {
		return err
	}
	v.current = files
	return nil
}

// files are the volume's paths and contents: every key, or only the items.
func (v *volumeSync) files(ctx context.Context) (map[string][]byte, error) {
	var data map[string][]byte
	var items []corev1.KeyToPath
	switch {
	case v.vol.Secret != nil:
		s, err := v.e.cs.CoreV1().Secrets(v.namespace).Get(ctx, v.vol.Secret.SecretName, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		data, items = s.Data, v.vol.Secret.Items
	default:
		cm, err := v.e.cs.CoreV1().ConfigMaps(v.namespace).Get(ctx, v.vol.ConfigMap.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		data = map[string][]byte{}
		for k, s := range cm.Data {
			data[k] = []byte(s)
		}
		items = v.vol.ConfigMap.Items
	}
	if len(items) == 0 {
		return data, nil
	}
	out := map[string][]byte{}
	for _, it := range items {
		b, ok := data[it.Key]
		if !ok {
			return nil, fmt.Errorf("volume %s: no key %s", v.vol.Name, it.Key)
		}
		out[it.Path] = b
	}
	return out, nil
}

// write puts files into a new timestamped folder and swaps ..data to it.
func (v *volumeSync) write(files map[string][]byte) error {
	if err := os.MkdirAll(v.dir, 0o755); err != nil {
		return err
	}
	ts := ".." + time.Now().UTC().Format("2006_01_02_15_04_05.000000000")
	for path, b := range files {
		full := filepath.Join(v.dir, ts, path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, b, 0o440); err != nil {
			return err
		}
	}
	old, _ := os.Readlink(filepath.Join(v.dir, "..data"))
	tmp := filepath.Join(v.dir, "..data_tmp")
	_ = os.Remove(tmp)
	if err := os.Symlink(ts, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(v.dir, "..data")); err != nil {
		return err
	}
	for path := range files {
		link := filepath.Join(v.dir, path)
		if _, err := os.Lstat(link); err == nil {
			continue
		}
		if err := os.Symlink(filepath.Join("..data", path), link); err != nil {
			return err
		}
	}
	for path := range v.current {
		if _, ok := files[path]; !ok {
			_ = os.Remove(filepath.Join(v.dir, path))
		}
	}
	if old != "" {
		return os.RemoveAll(filepath.Join(v.dir, old))
	}
	return nil
}
