package filetools_test

// Tokens and TLS against a daemon started with --tokens and --tls-*.

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	filetools "github.com/filetools/filetools/clients/go"
)

func TestTokens(t *testing.T) {
	tokens := filepath.Join(t.TempDir(), "tokens.json")
	err := os.WriteFile(tokens, []byte(`{"tokens":[{"name":"crew-a","token":"s3cret","workspaces":["reports","team-*"]}]}`), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	daemon := startDaemon(t, "--tokens", tokens)
	ctx := testContext(t)

	_, err = daemon.client(t).ListWorkspaces(ctx)
	expectReason(t, "a call without a token", err, codes.Unauthenticated, filetools.ErrUnauthenticated)
	_, err = daemon.client(t, filetools.WithToken("wrong")).ListWorkspaces(ctx)
	expectReason(t, "a call with an unknown token", err, codes.Unauthenticated, filetools.ErrUnauthenticated)

	client := daemon.client(t, filetools.WithToken("s3cret"))
	if _, err := client.CreateWorkspace(ctx, "reports"); err != nil {
		t.Fatal(err)
	}
	if _, err := client.StartRun(ctx, "team-blue", filetools.StartRunOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.WriteText(ctx, "reports", "q3.md", "# Q3\n", filetools.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = client.CreateWorkspace(ctx, "payroll")
	expectReason(t, "a workspace the token may not use", err, codes.PermissionDenied, filetools.ErrWorkspaceNotAllowed)
}

func TestTLSAndMutualTLS(t *testing.T) {
	dir := t.TempDir()
	ca := newCertificateAuthority(t)
	caFile := writePEM(t, dir, "ca.pem", "CERTIFICATE", ca.cert.Raw)
	serverCert, serverKey := ca.issue(t, dir, "server", x509.ExtKeyUsageServerAuth)
	clientCert, clientKey := ca.issue(t, dir, "client", x509.ExtKeyUsageClientAuth)
	ctx := testContext(t)

	plain := startDaemon(t, "--tls-cert", serverCert, "--tls-key", serverKey)
	client := plain.client(t, filetools.WithTLSFiles(caFile, "", ""))
	if _, err := client.CreateWorkspace(ctx, "secure"); err != nil {
		t.Fatalf("a call over TLS: %v", err)
	}
	// The same daemon, with the system's roots only: the handshake fails in Dial.
	_, err := filetools.Dial(ctx, plain.address, filetools.WithTLS(&tls.Config{MinVersion: tls.VersionTLS12}))
	if fe := asError(t, err); fe.Code != codes.Unavailable || !strings.Contains(fe.Message, "certificate") {
		t.Errorf("Dial trusting the wrong roots: %v, want Unavailable naming the certificate", err)
	}

	mutual := startDaemon(t, "--tls-cert", serverCert, "--tls-key", serverKey, "--tls-client-ca", caFile)
	client = mutual.client(t, filetools.WithTLSFiles(caFile, clientCert, clientKey))
	if _, err := client.CreateWorkspace(ctx, "secure"); err != nil {
		t.Fatalf("a call over mutual TLS: %v", err)
	}
	// Dial's health check is the first call, so Dial sees the refusal.
	_, err = filetools.Dial(ctx, mutual.address, filetools.WithTLSFiles(caFile, "", ""))
	if asError(t, err).Code != codes.Unavailable {
		t.Errorf("mutual TLS without a client certificate: %v, want Unavailable", err)
	}

	if _, err := filetools.Dial(ctx, mutual.address, filetools.WithTLSFiles(filepath.Join(dir, "missing.pem"), "", "")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("WithTLSFiles of a missing CA file: %v, want a not-exist error", err)
	}
}

type certificateAuthority struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newCertificateAuthority(t *testing.T) *certificateAuthority {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "filetools test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &certificateAuthority{cert: cert, key: key}
}

// issue writes a certificate for 127.0.0.1 and its key, and returns their paths.
func (ca *certificateAuthority) issue(t *testing.T, dir, name string, usage x509.ExtKeyUsage) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, template, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return writePEM(t, dir, name+".pem", "CERTIFICATE", der), writePEM(t, dir, name+"-key.pem", "PRIVATE KEY", keyDER)
}

func writePEM(t *testing.T, dir, name, kind string, der []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
