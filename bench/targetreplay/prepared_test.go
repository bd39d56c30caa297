package main

import (
	"reflect"
	"testing"
)

func TestCompoundStatements(t *testing.T) {
	text := "BEGIN NOT ATOMIC START TRANSACTION;UPDATE `s;b`.`t1` SET `c`='x;y' WHERE `id`=5;" +
		"IF ROW_COUNT()<>1 THEN SET @paraply_rows=CONCAT('paraply row count:1:',ROW_COUNT());" +
		"SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT=@paraply_rows;END IF;" +
		"INSERT INTO `paraply`.`applied` (`gtid`, `others`) VALUES ('0-1-2', NULL);END"
	got, ok := compoundStatements(text)
	want := []string{"START TRANSACTION", "UPDATE `s;b`.`t1` SET `c`='x;y' WHERE `id`=5",
		"INSERT INTO `paraply`.`applied` (`gtid`, `others`) VALUES ('0-1-2', NULL)"}
	if !ok || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, %v; want %q", got, ok, want)
	}
	if _, ok := compoundStatements("COMMIT"); ok {
		t.Fatal("COMMIT taken for a compound statement")
	}
}

func TestParameterize(t *testing.T) {
	shape, args := parameterize("UPDATE `db`.`sbtest3` SET `k`=CASE `id` WHEN 7 THEN -12 ELSE `k` END, " +
		"`c`='it''s a \\'q\\' \\\\ \\0', `b`=_binary'\\n', `d`=1.50 WHERE `id` IN (7,8) AND x3 IS NULL")
	wantShape := "UPDATE `db`.`sbtest3` SET `k`=CASE `id` WHEN ? THEN -? ELSE `k` END, " +
		"`c`=?, `b`=?, `d`=? WHERE `id` IN (?,?) AND x3 IS NULL"
	wantArgs := []any{int64(7), int64(12), "it's a 'q' \\ \x00", []byte("\n"), "1.50", int64(7), int64(8)}
	if shape != wantShape || !reflect.DeepEqual(args, wantArgs) {
		t.Fatalf("got\n%s\n%#v\nwant\n%s\n%#v", shape, args, wantShape, wantArgs)
	}
}
