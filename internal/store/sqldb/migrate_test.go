package sqldb

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

func TestLoadMigrations(t *testing.T) {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	for _, tc := range []struct {
		name string
		fs   fstest.MapFS
		want []int // versions, or nil for an error
	}{
		{"in order", fstest.MapFS{"m/0002_b.sql": file("b"), "m/0001_a.sql": file("a")}, []int{1, 2}},
		{"gap", fstest.MapFS{"m/0001_a.sql": file("a"), "m/0003_c.sql": file("c")}, nil},
		{"repeat", fstest.MapFS{"m/0001_a.sql": file("a"), "m/0001_b.sql": file("b")}, nil},
		{"starts at 2", fstest.MapFS{"m/0002_a.sql": file("a")}, nil},
		{"bad name", fstest.MapFS{"m/0001_a.sql": file("a"), "m/2_b.sql": file("b")}, nil},
		{"none", fstest.MapFS{"m/README": file("")}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ms, err := LoadMigrations(tc.fs, "m")
			if tc.want == nil {
				if err == nil {
					t.Errorf("no error, got %d migrations", len(ms))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for _, m := range ms {
				got = append(got, m.Version)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("versions %v, want %v", got, tc.want)
			}
		})
	}
}

// TestMigrate shows Migrate applies the steps after the schema's
// version in order, stops at the first that fails, naming it, and
// refuses a schema newer than it knows.
func TestMigrate(t *testing.T) {
	ms := []Migration{{1, "a", "a"}, {2, "b", "b"}, {3, "bad", "bad"}}
	var applied []string
	apply := func(m Migration) error {
		if m.Name == "bad" {
			return errors.New("syntax error")
		}
		applied = append(applied, m.Name)
		return nil
	}
	if err := Migrate(ms[:2], 0, apply); err != nil || !slices.Equal(applied, []string{"a", "b"}) {
		t.Fatalf("from 0: %v, applied %v", err, applied)
	}
	applied = nil
	if err := Migrate(ms[:2], 2, apply); err != nil || applied != nil {
		t.Fatalf("up to date: %v, applied %v", err, applied)
	}
	if err := Migrate(ms, 1, apply); err == nil || !strings.Contains(err.Error(), "0003_bad") || !slices.Equal(applied, []string{"b"}) {
		t.Errorf("failing step: %v, applied %v; want an error naming 0003_bad after b", err, applied)
	}
	if err := Migrate(ms[:1], 2, apply); !errors.Is(err, ErrSchemaTooNew) || !strings.Contains(err.Error(), "version 2") {
		t.Errorf("a binary knowing only v1 on a v2 schema: %v, want ErrSchemaTooNew", err)
	}
}
