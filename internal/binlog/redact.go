package binlog

import "regexp"

// A quoted SQL string: '...' or "..." with backslash escapes and doubled
// quotes.
const quoted = `(?:'(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.|"")*")`

// secrets finds what a statement may carry in clear: account passwords
// (CREATE/ALTER USER, GRANT ... IDENTIFIED BY, SET PASSWORD, PASSWORD()),
// replication passwords (CHANGE MASTER TO MASTER_PASSWORD=...), and
// encryption keys.
var secrets = regexp.MustCompile(`(?i)(` +
	`\bIDENTIFIED\s+(?:WITH\s+\S+\s+)?(?:BY|AS|USING)\s+(?:PASSWORD\s+)?|` +
	`\b(?:OLD_)?PASSWORD\s*\(\s*|` +
	`\bSET\s+PASSWORD\b[^=]*=\s*(?:PASSWORD\s*\(\s*)?|` +
	`\b(?:MASTER|SOURCE)_PASSWORD\s*=\s*|` +
	`\bENCRYPTION_KEY\s*=\s*|\bAES_(?:EN|DE)CRYPT\s*\([^,]*,\s*` +
	`)` + quoted)

// RedactSecrets returns q with the strings that may be passwords or keys
// replaced by '***', for logs, error messages and bookkeeping tables.
// Statements carry them as typed by the user (CREATE USER ... IDENTIFIED
// BY 'pw' is logged in clear by the server).
func RedactSecrets(q string) string {
	return secrets.ReplaceAllString(q, "$1'***'")
}
