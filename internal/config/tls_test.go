package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paraply/paraply/internal/testcert"
)

func TestParseTLSMode(t *testing.T) {
	for in, want := range map[string]TLSMode{"": TLSOff, "off": TLSOff, "on": TLSVerify, "ON": TLSVerify, "skip-verify": TLSSkipVerify} {
		got, err := ParseTLSMode(in)
		if err != nil || got != want {
			t.Errorf("ParseTLSMode(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ParseTLSMode("verify-ca"); err == nil {
		t.Error("ParseTLSMode(verify-ca): no error")
	}
}

func TestTLSOptionsConfig(t *testing.T) {
	dir := t.TempDir()
	f, err := testcert.Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(dir, "garbage.pem")
	os.WriteFile(garbage, []byte("not a certificate"), 0o600)

	c, err := TLSOptions{}.Config("db")
	if c != nil || err != nil {
		t.Errorf("off: %v, %v; want nil, nil", c, err)
	}
	c, err = TLSOptions{Mode: TLSVerify, CA: f.CA, Cert: f.ClientCert, Key: f.ClientKey}.Config("db.example")
	if err != nil {
		t.Fatal(err)
	}
	if c.ServerName != "db.example" || c.InsecureSkipVerify || c.RootCAs == nil || len(c.Certificates) != 1 {
		t.Errorf("on: ServerName %q, InsecureSkipVerify %v, RootCAs %v, %d certificates", c.ServerName, c.InsecureSkipVerify, c.RootCAs != nil, len(c.Certificates))
	}
	c, err = TLSOptions{Mode: TLSSkipVerify}.Config("db")
	if err != nil || !c.InsecureSkipVerify {
		t.Errorf("skip-verify: %v, %v", c, err)
	}
	for name, o := range map[string]TLSOptions{
		"CA while off":        {CA: f.CA},
		"certificate, no key": {Mode: TLSVerify, Cert: f.ClientCert},
		"key, no certificate": {Mode: TLSVerify, Key: f.ClientKey},
		"missing CA file":     {Mode: TLSVerify, CA: filepath.Join(dir, "nope.pem")},
		"CA file without PEM": {Mode: TLSVerify, CA: garbage},
		"key of another cert": {Mode: TLSVerify, Cert: f.ClientCert, Key: f.ServerKey},
	} {
		if _, err := o.Config("db"); err == nil {
			t.Errorf("%s: no error", name)
		} else if strings.Contains(err.Error(), "PRIVATE KEY-----") {
			t.Errorf("%s: the error quotes key material: %v", name, err)
		}
	}
}

func TestEndpointTLS(t *testing.T) {
	ep, err := ParseEndpoint("mysql://u@db:3307")
	if err != nil {
		t.Fatal(err)
	}
	if ep.DriverConfig("").TLS != nil {
		t.Error("TLS set without WithTLS")
	}
	c, _ := TLSOptions{Mode: TLSSkipVerify}.Config("db")
	dc := ep.WithTLS(c).DriverConfig("")
	if dc.TLS == nil || !dc.TLS.InsecureSkipVerify {
		t.Errorf("DriverConfig TLS = %v", dc.TLS)
	}
	if dc.TLS == c {
		t.Error("DriverConfig shares the caller's tls.Config")
	}
}
