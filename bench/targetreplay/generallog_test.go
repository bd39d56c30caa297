package main

import (
	"slices"
	"strings"
	"testing"
)

// A general log as MariaDB 10.11 writes it: the header, entries with and
// without a timestamp, a statement over two lines, commands that are not
// statements, and a second header where the log was reopened.
const sample = "/usr/sbin/mariadbd, Version: 10.11.19-MariaDB-log (Debian 12). started with:\n" +
	"Tcp port: 23301  Unix socket: /tmp/sock\n" +
	"Time\t\t    Id Command\tArgument\n" +
	"261130  2:45:31\t    10 Connect\troot@127.0.0.1 on  using TCP/IP\n" +
	"\t\t    10 Query\tCREATE TABLE p.t (id INT)\n" +
	"\t\t    10 Init DB\tsb`test\n" +
	"261130  2:45:37\t    11 Query\tBEGIN NOT ATOMIC START TRANSACTION;UPDATE t SET c='a\n" +
	"b' WHERE id=1;END\n" +
	"\t\t    10 Query\tSELECT 1\n" +
	"\t\t    11 Query\tCOMMIT\n" +
	"\t\t    11 Quit\t\n" +
	"/usr/sbin/mariadbd, Version: 10.11.19-MariaDB-log (Debian 12). started with:\n" +
	"Tcp port: 23301  Unix socket: /tmp/sock\n" +
	"Time\t\t    Id Command\tArgument\n"

func TestParseGeneralLog(t *testing.T) {
	got, err := parseGeneralLog(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	want := []logged{
		{"10", "CREATE TABLE p.t (id INT)"},
		{"10", "USE `sb``test`"},
		{"11", "BEGIN NOT ATOMIC START TRANSACTION;UPDATE t SET c='a\nb' WHERE id=1;END"},
		{"10", "SELECT 1"},
		{"11", "COMMIT"},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("parsed\n%q\nwant\n%q", got, want)
	}
}
