// Package anchor keeps copies of the audit chain's head outside the
// database: the newest record's sequence number and hash, and the id of
// the database they belong to. The hash chain alone shows an edited or
// removed record in the middle of the log, but not records cut from its
// end, nor a database deleted or swapped for another; a head kept
// elsewhere does (`warden audit verify`: "N newest records missing").
//
// The store writes a sidecar file beside the database after each commit
// (written to a temporary file, synced, renamed into place, the
// directory synced), and pushes the same head to the sinks the operator
// configured: a file on another path, syslog, an HTTP endpoint. Pushes
// are asynchronous and coalesced (only the newest head matters), so an
// anchor may trail the log by the records of the last moments, never run
// ahead of it.
package anchor

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Head is the newest audit record of one database.
type Head struct {
	// Store is the database's id, set once when it was created.
	Store string `json:"store"`
	// Seq and Hash are the newest record's; zero and "" for an empty log.
	Seq  int64  `json:"seq"`
	Hash string `json:"hash"`
	// Time is when the head was written.
	Time time.Time `json:"time"`
}

// Valid reports whether h names a database.
func (h Head) Valid() bool { return h.Store != "" && h.Seq >= 0 }

// ReadFile reads the head kept in path. A missing file is an error
// matching fs.ErrNotExist.
func ReadFile(path string) (Head, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Head{}, fmt.Errorf("read audit anchor: %w", err)
	}
	var h Head
	if err := json.Unmarshal(b, &h); err != nil || !h.Valid() {
		return Head{}, fmt.Errorf("read audit anchor %s: not an anchor (%v)", path, err)
	}
	return h, nil
}

// WriteFile replaces path with h durably: the new content goes to a
// temporary file in the same directory, which is synced and renamed
// over path, and the directory is synced, so a crash leaves either the
// old anchor or the new one, never a torn one.
func WriteFile(path string, h Head) error {
	b, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("write audit anchor: %w", err)
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write audit anchor: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after a successful rename there is nothing to remove
	_, werr := f.Write(append(b, '\n'))
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		return fmt.Errorf("write audit anchor %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write audit anchor: %w", err)
	}
	if d, err := os.Open(dir); err == nil {
		err = d.Sync()
		d.Close()
		if err != nil {
			return fmt.Errorf("write audit anchor %s: sync directory: %w", path, err)
		}
	}
	return nil
}
