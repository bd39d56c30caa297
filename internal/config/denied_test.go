package config

import (
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// TestExplainDenied: a refused login says which of the password and TLS
// was not given, and keeps the server's error; anything else passes as is.
func TestExplainDenied(t *testing.T) {
	denied := fmt.Errorf("reading streams: %w", &mysql.MySQLError{Number: 1045, SQLState: [5]byte{'2', '8', '0', '0', '0'},
		Message: "Access denied for user 'paraply'@'localhost' (using password: NO)"})
	ep, err := ParseEndpoint("mysql://paraply@db.example:3306")
	if err != nil {
		t.Fatal(err)
	}
	withTLS := ep.WithTLS(&tls.Config{ServerName: "db.example"})
	for _, c := range []struct {
		name string
		ep   Endpoint
		want []string
		not  []string
	}{
		{"neither", ep, []string{"the target refused the login: no password was given (set target-password-file", "PARAPLY_TARGET_PASSWORD",
			"; and TLS is off", "REQUIRE SSL", "target-tls = on and target-tls-ca"}, nil},
		{"no password", withTLS, []string{"no password was given", "target-password-file"}, []string{"TLS is off"}},
		{"no TLS", ep.WithPassword("s3cret"), []string{"the target refused the login: TLS is off"}, []string{"no password", "s3cret"}},
	} {
		got := c.ep.ExplainDenied("target", denied)
		if !errors.Is(got, denied) {
			t.Errorf("%s: %v does not wrap the server's error", c.name, got)
		}
		for _, w := range append(c.want, "Access denied for user 'paraply'@'localhost'") {
			if !strings.Contains(got.Error(), w) {
				t.Errorf("%s: %q lacks %q", c.name, got, w)
			}
		}
		for _, n := range c.not {
			if strings.Contains(got.Error(), n) {
				t.Errorf("%s: %q says %q", c.name, got, n)
			}
		}
	}
	if got := withTLS.WithPassword("s3cret").ExplainDenied("source", denied); got.Error() != denied.Error() {
		t.Errorf("with a password and TLS: %v, want the error as is", got)
	}
	other := &mysql.MySQLError{Number: 1044, Message: "Access denied for user 'paraply'@'%' to database 'x'"}
	if got := ep.ExplainDenied("source", other); got.Error() != other.Error() {
		t.Errorf("another error: %v, want it as is", got)
	}
}
