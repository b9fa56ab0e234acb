// Package backup replaces a file a user owns — an agent's settings, a
// warden config — keeping the old one beside it and never leaving a
// half-written file.
package backup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Replace writes data to path. If path exists, its old content is first
// copied to PATH.warden-backup-TIME (returned) and its mode is kept;
// a new file gets mode. The write goes through a temporary file in the
// same directory and a rename, so a crash leaves the old file or the
// new one.
func Replace(path string, data []byte, mode fs.FileMode, now time.Time) (string, error) {
	old, err := os.ReadFile(path)
	var saved string
	switch {
	case err == nil:
		if info, err := os.Stat(path); err == nil {
			mode = info.Mode().Perm()
		}
		saved = path + ".warden-backup-" + now.UTC().Format("20060102T150405Z")
		if err := os.WriteFile(saved, old, mode); err != nil {
			return "", fmt.Errorf("back up %s: %w", path, err)
		}
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return "", err
		}
	default:
		return "", err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", err
	}
	return saved, nil
}
