package doctor

import (
	"context"
	"errors"
	"fmt"

	"github.com/wardenhq/warden/internal/localapi"
)

// HostCheck reports the running host as it sees itself: whether the
// config file on disk is the one in force (a reload that was refused
// keeps the last good config, which an operator editing the file would
// not otherwise notice) and whether the store accepts work. No host
// running is not a failure: the other checks still say what one would do.
func HostCheck(status func(ctx context.Context) (localapi.Status, error)) Check {
	return Check{Name: "host", Run: func(ctx context.Context) Result {
		st, err := status(ctx)
		switch {
		case errors.Is(err, localapi.ErrNotRunning):
			return Result{Status: OK, Summary: "not running (start it with `warden serve`)"}
		case err != nil:
			return Result{Status: Fail, Summary: "does not answer: " + err.Error()}
		}
		return hostResult(st)
	}}
}

func hostResult(st localapi.Status) Result {
	r := Result{Status: OK, Summary: "running; its config and store are healthy"}
	add := func(key, value string) { r.Details = append(r.Details, Detail{Key: key, Value: value}) }
	add("host", st.Host)
	digest := "the defaults"
	if st.Config.Digest != "" {
		digest = fmt.Sprintf("sha256:%.12s…", st.Config.Digest)
	}
	add("config in force", digest)
	if st.Config.Rejected != "" {
		r.Status = Warn
		r.Summary = "running on its last good config: the file on disk was refused"
		add("refused", st.Config.Rejected)
		add("since", st.Config.Since.Format("2006-01-02 15:04:05 MST"))
	}
	if !st.Store.OK {
		r.Status = Fail
		r.Summary = "running, but its store refuses work: every action is denied"
		add("store fault", st.Store.Fault)
		add("since", st.Store.Since.Format("2006-01-02 15:04:05 MST"))
	}
	add("audit records", fmt.Sprint(st.Store.AuditSeq))
	return r
}
