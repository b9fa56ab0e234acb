package postgres

import "testing"

func TestRebind(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`SELECT a FROM t WHERE b = ? AND c = ?`, `SELECT a FROM t WHERE b = $1 AND c = $2`},
		{`UPDATE t SET a = '?' WHERE b = ?`, `UPDATE t SET a = '?' WHERE b = $1`},
		{`SELECT "a?" FROM t WHERE b IN (?, ?, ?)`, `SELECT "a?" FROM t WHERE b IN ($1, $2, $3)`},
		{`SELECT 'it''s ?' WHERE x = ?`, `SELECT 'it''s ?' WHERE x = $1`},
	} {
		if got := rebind(tc.in); got != tc.want {
			t.Errorf("rebind(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := rebind(tc.in); got != tc.want {
			t.Errorf("rebind(%q) again (cached) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
