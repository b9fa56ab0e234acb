package backup

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestReplace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "settings.json")
	now := time.Date(2026, 5, 18, 10, 2, 11, 0, time.UTC)
	saved, err := Replace(path, []byte("one"), 0o600, now)
	if err != nil || saved != "" {
		t.Fatalf("new file: %q, %v", saved, err)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", info.Mode().Perm())
	}
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	saved, err = Replace(path, []byte("two"), 0o600, now)
	if err != nil || saved != path+".warden-backup-20260518T100211Z" {
		t.Fatalf("replace: %q, %v", saved, err)
	}
	if b, _ := os.ReadFile(saved); string(b) != "one" {
		t.Errorf("backup holds %q", b)
	}
	if b, _ := os.ReadFile(path); string(b) != "two" {
		t.Errorf("file holds %q", b)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o640 {
		t.Errorf("the file's own mode was not kept: %v", info.Mode().Perm())
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 2 {
		t.Errorf("leftovers: %v", entries)
	}
}
