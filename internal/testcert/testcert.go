// Package testcert makes throwaway X.509 certificates for tests: a CA, and
// server and client certificates it signs, written as PEM files that both
// mariadbd (--ssl-ca, --ssl-cert, --ssl-key) and Go's crypto/tls read.
// Keys are ECDSA P-256; certificates are valid from an hour ago for a day.
package testcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// CA is a certificate authority held in memory.
type CA struct {
	cert *x509.Certificate
	der  []byte
	key  *ecdsa.PrivateKey
}

// NewCA makes a self-signed CA named name.
func NewCA(name string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := template(name)
	tmpl.IsCA = true
	tmpl.BasicConstraintsValid = true
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("testcert: CA: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{cert: cert, der: der, key: key}, nil
}

// WriteCert writes the CA's certificate to path.
func (ca *CA) WriteCert(path string) error {
	return writePEM(path, "CERTIFICATE", ca.der, 0o644)
}

// IssueServer writes a server certificate for names (host names or IP
// addresses, all put in the subject alternative names) and its key.
func (ca *CA) IssueServer(certPath, keyPath string, names ...string) error {
	tmpl := template(names[0])
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	return ca.issue(tmpl, certPath, keyPath)
}

// IssueClient writes a client certificate whose subject is commonName, and
// its key.
func (ca *CA) IssueClient(certPath, keyPath, commonName string) error {
	tmpl := template(commonName)
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	return ca.issue(tmpl, certPath, keyPath)
}

func (ca *CA) issue(tmpl *x509.Certificate, certPath, keyPath string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return fmt.Errorf("testcert: %s: %w", tmpl.Subject.CommonName, err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	if err := writePEM(certPath, "CERTIFICATE", der, 0o644); err != nil {
		return err
	}
	return writePEM(keyPath, "PRIVATE KEY", pkcs8, 0o600)
}

// Files are the PEM files of a complete test setup (see Write).
type Files struct {
	CA                    string // the CA's certificate
	ServerCert, ServerKey string // for 127.0.0.1 and localhost
	ClientCert, ClientKey string // subject CN=paraply
	OtherCA               string // an unrelated CA: verifying the server with it fails
	ca                    *CA
}

// Write makes a CA, a server certificate for 127.0.0.1 and localhost, a
// client certificate and an unrelated second CA, in dir.
func Write(dir string) (*Files, error) {
	ca, err := NewCA("paraply test CA")
	if err != nil {
		return nil, err
	}
	other, err := NewCA("some other CA")
	if err != nil {
		return nil, err
	}
	f := &Files{
		CA:         filepath.Join(dir, "ca.pem"),
		ServerCert: filepath.Join(dir, "server-cert.pem"),
		ServerKey:  filepath.Join(dir, "server-key.pem"),
		ClientCert: filepath.Join(dir, "client-cert.pem"),
		ClientKey:  filepath.Join(dir, "client-key.pem"),
		OtherCA:    filepath.Join(dir, "other-ca.pem"),
		ca:         ca,
	}
	for _, step := range []func() error{
		func() error { return ca.WriteCert(f.CA) },
		func() error { return other.WriteCert(f.OtherCA) },
		func() error { return ca.IssueServer(f.ServerCert, f.ServerKey, "127.0.0.1", "localhost") },
		func() error { return ca.IssueClient(f.ClientCert, f.ClientKey, "paraply") },
	} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// Authority returns the CA that signed the files, to issue more
// certificates (a server certificate for other names, say).
func (f *Files) Authority() *CA { return f.ca }

func template(cn string) *x509.Certificate {
	serial, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	now := time.Now()
	return &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn, Organization: []string{"paraply tests"}},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
	}
}

func writePEM(path, typ string, der []byte, perm os.FileMode) error {
	b := pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
	if err := os.WriteFile(path, b, perm); err != nil {
		return fmt.Errorf("testcert: %w", err)
	}
	return nil
}
