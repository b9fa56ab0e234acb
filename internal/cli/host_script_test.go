package cli_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	_ "modernc.org/sqlite" // the tamper command edits the store file directly

	"github.com/wardenhq/warden/internal/localapi"
)

// scriptWait bounds how long the helper commands below wait for a host.
const scriptWait = 30 * time.Second

// cmdWaitSock is the script command "waitsock STATE": wait until a
// warden host answers on STATE's admin socket (warden serve was started
// in the background).
func cmdWaitSock(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitsock STATE")
	}
	waitHost(ts, args[0], func(c *localapi.Client) error {
		if _, err := c.Grants(context.Background()); err != nil {
			return fmt.Errorf("no host on %s: %w", args[0], err)
		}
		return nil
	})
}

// cmdWaitPending is the script command "waitpending STATE N": wait until
// the host has exactly N pending requests.
func cmdWaitPending(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: waitpending STATE N")
	}
	n, err := strconv.Atoi(args[1])
	if err != nil {
		ts.Fatalf("waitpending: bad count %q", args[1])
	}
	waitHost(ts, args[0], func(c *localapi.Client) error {
		list, err := c.Approvals(context.Background())
		if err == nil && len(list) == n {
			return nil
		}
		return fmt.Errorf("want %d pending requests, have %d (%v)", n, len(list), err)
	})
}

// waitHost polls the host of the state directory state with ready until
// ready returns nil; after scriptWait it fails the script with ready's
// last error.
func waitHost(ts *testscript.TestScript, state string, ready func(*localapi.Client) error) {
	c := localapi.NewClient(filepath.Join(ts.MkAbs(state), localapi.SocketName))
	defer c.Close()
	deadline := time.Now().Add(scriptWait)
	for {
		err := ready(c)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("%v after %v", err, scriptWait)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// cmdSetJSON is the script command "setjson NAME PATH": set the
// environment variable NAME to the value at PATH (dot-separated keys and
// array indexes, e.g. 0.id) in the JSON of the last command's stdout.
func cmdSetJSON(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: setjson NAME PATH")
	}
	var v any
	if err := json.Unmarshal([]byte(ts.ReadFile("stdout")), &v); err != nil {
		ts.Fatalf("setjson: stdout is not JSON: %v", err)
	}
	for _, k := range strings.Split(args[1], ".") {
		switch x := v.(type) {
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(x) {
				ts.Fatalf("setjson: no index %q in an array of %d", k, len(x))
			}
			v = x[i]
		case map[string]any:
			var ok bool
			if v, ok = x[k]; !ok {
				ts.Fatalf("setjson: no key %q", k)
			}
		default:
			ts.Fatalf("setjson: %q: not an object or array", k)
		}
	}
	s, ok := v.(string)
	if !ok {
		s = fmt.Sprint(v)
	}
	ts.Setenv(args[0], s)
}

// cmdTamper is the script command "tamper DB SEQ TEXT": overwrite the
// payload of audit record SEQ in the SQLite file DB, as someone editing
// the log behind warden's back would (the host must be stopped).
func cmdTamper(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: tamper DB SEQ TEXT")
	}
	db, err := sql.Open("sqlite", ts.MkAbs(args[0]))
	if err != nil {
		ts.Fatalf("tamper: %v", err)
	}
	defer db.Close()
	// The store's triggers refuse updates; whoever edits the file
	// directly can drop them, and the hash chain is what catches that.
	if _, err := db.Exec(`DROP TRIGGER IF EXISTS audit_no_update`); err != nil {
		ts.Fatalf("tamper: %v", err)
	}
	res, err := db.Exec(`UPDATE audit SET payload = ? WHERE seq = ?`, args[2], args[1])
	if err != nil {
		ts.Fatalf("tamper: %v", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		ts.Fatalf("tamper: no audit record %s", args[1])
	}
}

// cmdWaitTask is the script command "waittask STATE ID STATUS": wait
// until the host's task ID has status STATUS.
func cmdWaitTask(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: waittask STATE ID STATUS")
	}
	waitHost(ts, args[0], func(c *localapi.Client) error {
		card, err := c.KanbanTask(context.Background(), args[1])
		if err == nil && string(card.Status) == args[2] {
			return nil
		}
		return fmt.Errorf("task %s: want status %s, have %q (%v)", args[1], args[2], card.Status, err)
	})
}
