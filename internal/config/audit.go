package config

import (
	"net/url"
	"path"
	"strings"
)

// Audit is the audit: section: copies of the audit chain's head (its
// newest sequence number and hash) kept outside the database, so that
// records removed from the end of the log, or a deleted or replaced
// database, are noticed. The host always keeps one beside the database;
// these add copies elsewhere. They are read once at start.
type Audit struct {
	// AnchorFile is a second anchor file, on another path (ideally
	// another volume or a mount the agent's sandbox never sees). `warden
	// audit verify` checks the log against it too.
	AnchorFile string
	// AnchorSyslog sends each new head to the local syslog (tag
	// warden-audit), where log shipping can take it off the machine.
	AnchorSyslog bool
	// AnchorURL receives each new head as a JSON POST.
	AnchorURL string
}

type rawAudit struct {
	AnchorFile   node `yaml:"anchor_file"`
	AnchorSyslog node `yaml:"anchor_syslog"`
	AnchorURL    node `yaml:"anchor_url"`
}

// audit reads the audit: section.
func (v *validator) audit(r *rawAudit) Audit {
	var a Audit
	if r == nil {
		return a
	}
	if n := r.AnchorFile.n; n != nil {
		if s, ok := v.str(n, "audit.anchor_file"); ok {
			if !strings.HasPrefix(s, "/") {
				v.errorf(n, "audit.anchor_file: %q: want an absolute path", s)
			} else {
				a.AnchorFile = path.Clean(s)
			}
		}
	}
	v.boolean(r.AnchorSyslog.n, "audit.anchor_syslog", &a.AnchorSyslog)
	if n := r.AnchorURL.n; n != nil {
		if s, ok := v.str(n, "audit.anchor_url"); ok && s != "" { // "": no URL sink, as documented
			u, err := url.Parse(s)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				v.errorf(n, "audit.anchor_url: %q: want an http(s) URL", s)
			} else {
				a.AnchorURL = s
			}
		}
	}
	return a
}
