package host

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"time"

	"github.com/wardenhq/warden/internal/config"
	"github.com/wardenhq/warden/internal/dispatch"
	"github.com/wardenhq/warden/internal/localapi"
	"github.com/wardenhq/warden/internal/workerapi"
)

// listenRemote opens the remote workers' TLS listener (kanban.remote)
// with the configured certificate, or the self-signed one kept in the
// state directory (hidden from every sandbox), and returns it with the
// certificate's fingerprint.
func listenRemote(state string, rc config.KanbanRemote) (net.Listener, string, error) {
	var (
		cert tls.Certificate
		err  error
	)
	if rc.CertFile != "" {
		cert, err = workerapi.LoadCert(rc.CertFile, rc.KeyFile)
	} else {
		cert, err = workerapi.SelfSigned(filepath.Join(state, workerapi.TLSDir))
	}
	if err != nil {
		return nil, "", err
	}
	ln, err := workerapi.ListenTLS(rc.Listen, cert)
	if err != nil {
		return nil, "", err
	}
	return ln, workerapi.CertFingerprint(cert), nil
}

// issueRemote issues a task to a remote worker for the admin API.
func (h *host) issueRemote(ctx context.Context, task string, ttl time.Duration) (localapi.KanbanRemote, error) {
	t, err := h.dispatch.Remote(ctx, task, ttl)
	if errors.Is(err, dispatch.ErrNotIssuable) {
		return localapi.KanbanRemote{}, fmt.Errorf("%w: %w", localapi.ErrNotIssuable, err)
	}
	if errors.Is(err, dispatch.ErrNoRemote) {
		return localapi.KanbanRemote{}, fmt.Errorf("%w: %w", localapi.ErrNotIssuable, err)
	}
	if err != nil {
		return localapi.KanbanRemote{}, err
	}
	return localapi.KanbanRemote{Task: t.Task, Run: t.Run, Token: t.Token, Expires: t.Expires, Addr: h.remoteAddr, Fingerprint: h.remoteFP}, nil
}
