package web

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wardenhq/warden/internal/grant"
	"github.com/wardenhq/warden/internal/store"
)

// Audit page limits.
const (
	defaultAuditLimit = 200
	maxAuditLimit     = 5000
)

// grantsData is the grants page.
type grantsData struct {
	Grants []grant.Grant
	Now    time.Time
}

// grantsPage lists the stored grants (the config allowlist lives in the
// config file, not here).
func (c *Console) grantsPage(w http.ResponseWriter, r *http.Request, a *authn) {
	gs, err := c.o.Store.ListGrants(r.Context())
	if err != nil {
		c.fail(w, r, fmt.Errorf("list grants: %w", err))
		return
	}
	c.render(w, r, http.StatusOK, "grants", c.pageFor(a, "grants", "Grants", grantsData{Grants: gs, Now: c.o.Now()}))
}

// revokeGrant removes one grant.
func (c *Console) revokeGrant(w http.ResponseWriter, r *http.Request, a *authn) {
	id := r.PostFormValue("id")
	if id == "" {
		c.done(w, r, a, "/grants", http.StatusBadRequest, "error", "Which grant? No id was sent.")
		return
	}
	err := c.o.Store.RevokeGrant(r.Context(), id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		c.done(w, r, a, "/grants", http.StatusNotFound, "late", "There is no grant "+id+" (already revoked?).")
	case err != nil:
		c.fail(w, r, fmt.Errorf("revoke grant %s: %w", id, err))
	default:
		c.log.InfoContext(r.Context(), "grant revoked", "id", id)
		c.done(w, r, a, "/grants", http.StatusOK, "ok", "Revoked grant "+id+".")
	}
}

// auditData is the audit page.
type auditData struct {
	Session, Verdict, Since string
	Limit                   int
	// Error explains a filter the page could not read.
	Error string
	// Records are newest first.
	Records []store.Decision
}

// auditPage lists audit records by session, verdict and time.
func (c *Console) auditPage(w http.ResponseWriter, r *http.Request, a *authn) {
	q := r.URL.Query()
	d := auditData{Session: q.Get("session"), Verdict: q.Get("verdict"), Since: q.Get("since"), Limit: defaultAuditLimit}
	f := store.AuditFilter{Session: d.Session, Verdict: d.Verdict}
	var errs []string
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			errs = append(errs, "limit must be a positive number")
		} else {
			d.Limit = min(n, maxAuditLimit)
		}
	}
	f.Limit = d.Limit
	if d.Since != "" {
		t, err := parseSince(d.Since, c.o.Now())
		if err != nil {
			errs = append(errs, err.Error())
		} else {
			f.Since = t
		}
	}
	switch d.Verdict {
	case "", "allow", "deny", "ask":
	default:
		errs = append(errs, "verdict must be allow, deny or ask")
		f.Verdict = ""
	}
	d.Error = strings.Join(errs, "; ")
	recs, err := c.o.Store.Decisions(r.Context(), f)
	if err != nil {
		c.fail(w, r, fmt.Errorf("list decisions: %w", err))
		return
	}
	slices.Reverse(recs)
	d.Records = recs
	c.render(w, r, http.StatusOK, "audit", c.pageFor(a, "audit", "Audit", d))
}

// parseSince reads the audit page's "since": RFC 3339, the browser's
// datetime-local or a date (local time), or a duration meaning that long
// ago ("90m", "24h").
func parseSince(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("since %q is not a time (2006-01-02T15:04, RFC 3339) or a duration (24h)", s)
}

// verifyChain recomputes the audit hash chain and reports the result.
func (c *Console) verifyChain(w http.ResponseWriter, r *http.Request, a *authn) {
	n, err := c.o.Store.VerifyChain(r.Context())
	switch {
	case errors.Is(err, store.ErrChainBroken):
		c.log.ErrorContext(r.Context(), "audit chain broken", "err", err)
		c.done(w, r, a, "/audit", http.StatusConflict, "error", fmt.Sprintf("Audit chain BROKEN (%d records checked): %v.", n, err))
	case err != nil:
		c.fail(w, r, fmt.Errorf("verify chain: %w", err))
	default:
		c.done(w, r, a, "/audit", http.StatusOK, "ok", fmt.Sprintf("Audit chain verified: %d records, every hash matches.", n))
	}
}
