package workerapi

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wardenhq/warden/internal/connlimit"
)

// TLS file names in the state directory's TLSDir, where the host keeps
// the worker listener's self-signed certificate when the config names
// none.
const (
	TLSDir      = "worker-tls"
	TLSCertFile = "cert.pem"
	TLSKeyFile  = "key.pem"
)

// ErrPin: the host's certificate is not the one pinned.
var ErrPin = errors.New("the host's certificate does not match the pinned fingerprint")

// Fingerprint is the pin of a certificate: the lower-case hex SHA-256
// of its DER bytes.
func Fingerprint(der []byte) string {
	h := sha256.Sum256(der)
	return hex.EncodeToString(h[:])
}

// ParsePin reads a fingerprint as an operator writes it: 64 hex digits,
// any case, optionally with colons and a "sha256:" prefix.
func ParsePin(s string) ([]byte, error) {
	s = strings.TrimPrefix(strings.ToLower(strings.TrimSpace(s)), "sha256:")
	s = strings.ReplaceAll(s, ":", "")
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != sha256.Size {
		return nil, fmt.Errorf("pin %q: want the certificate's SHA-256 fingerprint, 64 hex digits", s)
	}
	return b, nil
}

// LoadCert loads the listener's certificate and key from PEM files.
func LoadCert(certFile, keyFile string) (tls.Certificate, error) {
	c, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("worker listener certificate: %w", err)
	}
	return c, nil
}

// SelfSigned loads the self-signed certificate kept in dir
// (STATE/TLSDir), creating it (ECDSA P-256, ten years) on first use.
// Workers pin its fingerprint; there is no CA to trust.
func SelfSigned(dir string) (tls.Certificate, error) {
	certFile, keyFile := filepath.Join(dir, TLSCertFile), filepath.Join(dir, TLSKeyFile)
	if c, err := tls.LoadX509KeyPair(certFile, keyFile); err == nil {
		return c, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return tls.Certificate{}, fmt.Errorf("worker listener certificate: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return tls.Certificate{}, fmt.Errorf("worker listener certificate: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("worker listener certificate: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("worker listener certificate: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: "warden worker listener"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(10, 0, 0),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("worker listener certificate: %w", err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("worker listener certificate: %w", err)
	}
	// The key first, exclusively: two hosts starting at once on one
	// state directory cannot both write one.
	if err := writeExcl(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder})); err != nil {
		return tls.Certificate{}, err
	}
	if err := writeExcl(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})); err != nil {
		return tls.Certificate{}, err
	}
	return tls.LoadX509KeyPair(certFile, keyFile)
}

func writeExcl(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("worker listener certificate: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("worker listener certificate: %w", err)
	}
	return f.Close()
}

// CertFingerprint is the pin of cert's leaf.
func CertFingerprint(cert tls.Certificate) string {
	if len(cert.Certificate) == 0 {
		return ""
	}
	return Fingerprint(cert.Certificate[0])
}

// ListenTLS listens on addr for remote workers: TLS 1.3 with cert, with
// connection caps in all and per remote address (connlimit.Defaults). A
// connection that does not finish its handshake and say hello in time
// is cut (Options.HelloTimeout).
func ListenTLS(addr string, cert tls.Certificate) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("worker listener: %w", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13}
	return tls.NewListener(connlimit.New(ln, connlimit.Options{Key: connlimit.RemoteIP}), cfg), nil
}

// DialTLS connects to a host's worker listener at addr and checks its
// certificate against pin (ParsePin): the connection is refused with
// ErrPin unless the host's leaf certificate has that SHA-256.
func DialTLS(ctx context.Context, addr string, pin []byte) (*Client, error) {
	if len(pin) != sha256.Size {
		return nil, errors.New("connect to the host: no certificate pin")
	}
	d := tls.Dialer{Config: &tls.Config{
		MinVersion: tls.VersionTLS13,
		// The pin is the trust: there is no CA and no name to check,
		// and VerifyConnection refuses any other certificate.
		InsecureSkipVerify: true, //nolint:gosec // pinned below
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return ErrPin
			}
			h := sha256.Sum256(cs.PeerCertificates[0].Raw)
			if !bytes.Equal(h[:], pin) {
				return ErrPin
			}
			return nil
		},
	}}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("connect to the host's worker listener %s: %w", addr, err)
	}
	return newClient(c), nil
}
