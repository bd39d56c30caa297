package binlog

import (
	"strings"
	"testing"
)

func TestRedactSecrets(t *testing.T) {
	for _, c := range []struct{ in, secret string }{
		{"CREATE USER 'app'@'%' IDENTIFIED BY 's3cr3t'", "s3cr3t"},
		{"create user app identified by \"dq pw\"", "dq pw"},
		{"ALTER USER app IDENTIFIED WITH mysql_native_password BY 'n4tive'", "n4tive"},
		{"GRANT ALL ON *.* TO x IDENTIFIED BY PASSWORD '*ABCDEF0123'", "*ABCDEF0123"},
		{"SET PASSWORD FOR 'u'@'h' = PASSWORD('pw(1)')", "pw(1)"},
		{"SET PASSWORD = 'plain'", "plain"},
		{"CHANGE MASTER TO MASTER_HOST='h', MASTER_PASSWORD='repl pw'", "repl pw"},
		{"CREATE USER u IDENTIFIED BY 'it''s \\' tricky'", "tricky"},
		{"SELECT AES_ENCRYPT(col, 'k3y')", "k3y"},
	} {
		got := RedactSecrets(c.in)
		if strings.Contains(got, c.secret) || !strings.Contains(got, "'***'") {
			t.Errorf("RedactSecrets(%q) = %q: the secret %q survives", c.in, got, c.secret)
		}
	}
	keep := "ALTER TABLE t ADD COLUMN password VARCHAR(20) DEFAULT 'x'"
	if got := RedactSecrets(keep); got != keep {
		t.Errorf("a statement without secrets changed: %q", got)
	}
}
