package doctor

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/localapi"
)

func TestHostCheck(t *testing.T) {
	since := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name   string
		st     localapi.Status
		err    error
		status Status
		detail string // a detail key the result must carry
	}{
		{name: "not running", err: fmt.Errorf("dial: %w", localapi.ErrNotRunning), status: OK},
		{name: "no answer", err: errors.New("timeout"), status: Fail},
		{name: "healthy", st: localapi.Status{Host: "h1", Config: localapi.ConfigStatus{Digest: "abcdef0123456789"}, Store: localapi.StoreStatus{OK: true, AuditSeq: 7}}, status: OK, detail: "config in force"},
		{name: "reload refused", st: localapi.Status{Config: localapi.ConfigStatus{Rejected: "config.yaml is empty", Since: since}, Store: localapi.StoreStatus{OK: true}}, status: Warn, detail: "refused"},
		{name: "store fault", st: localapi.Status{Config: localapi.ConfigStatus{Rejected: "broken", Since: since}, Store: localapi.StoreStatus{Fault: "disk full", Since: since}}, status: Fail, detail: "store fault"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := HostCheck(func(context.Context) (localapi.Status, error) { return tt.st, tt.err })
			r := Run(t.Context(), []Check{c})[0]
			if r.Status != tt.status {
				t.Fatalf("status %s, want %s (%s)", r.Status, tt.status, r.Summary)
			}
			if r.Name != "host" {
				t.Errorf("name %q", r.Name)
			}
			if tt.detail == "" {
				return
			}
			for _, d := range r.Details {
				if d.Key == tt.detail {
					return
				}
			}
			t.Errorf("no %q detail in %+v", tt.detail, r.Details)
		})
	}
}
