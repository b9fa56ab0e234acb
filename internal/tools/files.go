package tools

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// MaxFileSize bounds what read_file returns and write_file accepts.
const MaxFileSize = 8 << 20

// ErrTooLarge: a file over MaxFileSize.
var ErrTooLarge = errors.New("file too large")

// Files reads and writes files confined to one root directory with
// os.Root: no path, symlink or ".." can leave it, so a tool confined to a
// workspace cannot reach warden's state or config outside it.
type Files struct {
	Root string
}

// WriteFile writes data to name (relative to the root, or absolute
// inside it), creating parent directories 0755 and the file 0644, via a
// temporary file and rename so a reader never sees half a file.
func (f Files) WriteFile(name string, data []byte) error {
	if len(data) > MaxFileSize {
		return fmt.Errorf("write %s: %w (%d bytes)", name, ErrTooLarge, len(data))
	}
	root, rel, err := f.open(name)
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	defer root.Close()
	if dir := filepath.Dir(rel); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	tmp := rel + ".warden-tmp"
	w, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if _, err := w.Write(data); err != nil {
		w.Close()
		root.Remove(tmp)
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := w.Close(); err != nil {
		root.Remove(tmp)
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := root.Rename(tmp, rel); err != nil {
		root.Remove(tmp)
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

// ReadFile reads name inside the root, up to MaxFileSize.
func (f Files) ReadFile(name string) ([]byte, error) {
	root, rel, err := f.open(name)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	defer root.Close()
	r, err := root.Open(rel)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("read %s: %w", name, ErrTooLarge)
	}
	return data, nil
}

// open opens the root and turns name into a path relative to it.
func (f Files) open(name string) (*os.Root, string, error) {
	if f.Root == "" {
		return nil, "", errors.New("no root directory")
	}
	rel := name
	if filepath.IsAbs(name) {
		r, err := filepath.Rel(f.Root, name)
		if err != nil {
			return nil, "", err
		}
		rel = r
	}
	root, err := os.OpenRoot(f.Root)
	if err != nil {
		return nil, "", err
	}
	return root, filepath.Clean(rel), nil
}
