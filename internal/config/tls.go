package config

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"
)

// TLSMode says whether and how a connection to a server uses TLS.
type TLSMode int

const (
	// TLSOff connects in clear text (the default).
	TLSOff TLSMode = iota
	// TLSVerify requires TLS and verifies the server: its certificate must
	// chain to the CA (TLSOptions.CA, else the system's roots) and name the
	// host connected to (verify-identity).
	TLSVerify
	// TLSSkipVerify requires TLS but accepts any server certificate. It
	// protects against eavesdropping only, not against an impostor: for
	// tests.
	TLSSkipVerify
)

// ParseTLSMode parses the value of --source-tls / --target-tls: "off",
// "on" or "skip-verify".
func ParseTLSMode(s string) (TLSMode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "off":
		return TLSOff, nil
	case "on":
		return TLSVerify, nil
	case "skip-verify":
		return TLSSkipVerify, nil
	}
	return TLSOff, fmt.Errorf("TLS mode %q: want off, on or skip-verify", s)
}

func (m TLSMode) String() string {
	switch m {
	case TLSVerify:
		return "on"
	case TLSSkipVerify:
		return "skip-verify"
	}
	return "off"
}

// TLSOptions are the TLS settings of one endpoint, as the flags give them.
type TLSOptions struct {
	Mode TLSMode
	// CA is a PEM file of the certificates that may sign the server's
	// certificate; "" trusts the system's roots.
	CA string
	// Cert and Key are PEM files of a client certificate and its key, for
	// servers that require one (REQUIRE X509); both or neither.
	Cert, Key string
}

// Config returns the tls.Config for connecting to host (the name or address
// the certificate must carry), or nil when Mode is TLSOff. Files that cannot
// be read or parsed, a certificate without its key, and files given while
// TLS is off are errors.
func (o TLSOptions) Config(host string) (*tls.Config, error) {
	if o.Mode == TLSOff {
		if o.CA != "" || o.Cert != "" || o.Key != "" {
			return nil, errors.New("a TLS CA, certificate or key is given but TLS is off (set the TLS mode to on)")
		}
		return nil, nil
	}
	if (o.Cert == "") != (o.Key == "") {
		return nil, errors.New("a TLS client certificate needs its key, and a key its certificate")
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: host}
	if o.Mode == TLSSkipVerify {
		c.InsecureSkipVerify = true
	}
	if o.CA != "" {
		pem, err := os.ReadFile(o.CA)
		if err != nil {
			return nil, fmt.Errorf("TLS CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("TLS CA %s: no PEM certificate in it", o.CA)
		}
		c.RootCAs = pool
	}
	if o.Cert != "" {
		pair, err := tls.LoadX509KeyPair(o.Cert, o.Key)
		if err != nil {
			// The error names the files and the problem; it never quotes
			// key material.
			return nil, fmt.Errorf("TLS client certificate: %w", err)
		}
		c.Certificates = []tls.Certificate{pair}
	}
	return c, nil
}

// WithTLS returns e connecting with TLS configuration c (nil: clear text).
// Open and DriverConfig use it; the replication stream takes it separately
// (source.Config.TLS).
func (e Endpoint) WithTLS(c *tls.Config) Endpoint { e.tls = c; return e }

// TLS is the endpoint's TLS configuration, nil when it connects in clear
// text.
func (e Endpoint) TLS() *tls.Config { return e.tls }
