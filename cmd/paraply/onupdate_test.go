package main

import (
	"strconv"
	"testing"
	"time"
)

// TestOnUpdateCurrentTimestampBehind: an application table with an
// updated_at column, a row inserted and updated in the same second (so
// the update's row image keeps updated_at as the insert set it), and
// paraply starting seconds later. The target must hold the source's
// updated_at, as MariaDB's replica does, not the second paraply applied
// the update in.
func TestOnUpdateCurrentTimestampBehind(t *testing.T) {
	r := newFidelityRig(t, "onupd")
	execAll(t, r.sdb, "CREATE DATABASE app",
		"CREATE TABLE app.t (id INT PRIMARY KEY, n INT, updated_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP)")
	// Rows inserted and updated within one second on the source; a pair
	// that straddled a second is kept too, but does not count.
	same := 0
	for id := 1; same < 3 && id < 50; id++ {
		var before, after string
		execAll(t, r.sdb, "INSERT INTO app.t (id, n) VALUES ("+strconv.Itoa(id)+", 0)")
		if err := r.sdb.QueryRow("SELECT updated_at FROM app.t WHERE id = ?", id).Scan(&before); err != nil {
			t.Fatal(err)
		}
		execAll(t, r.sdb, "UPDATE app.t SET n = 1 WHERE id = "+strconv.Itoa(id))
		if err := r.sdb.QueryRow("SELECT updated_at FROM app.t WHERE id = ?", id).Scan(&after); err != nil {
			t.Fatal(err)
		}
		if before == after {
			same++
		}
	}
	if same < 3 {
		t.Fatalf("no row was inserted and updated within one second")
	}
	end := r.sourcePos(t)
	time.Sleep(2500 * time.Millisecond) // paraply behind by a few seconds
	r.catchUp(t)
	r.waitNative(t, end)
	source, native, ours := dumpDatabase(t, r.sdb, "app"), dumpDatabase(t, r.ndb, "app"), dumpDatabase(t, r.tdb, "app")
	if native != source {
		t.Fatalf("MariaDB's replica differs from the source\nsource:\n%s\nnative:\n%s", source, native)
	}
	if ours != source {
		t.Errorf("paraply's target differs from the source\nsource:\n%s\nparaply:\n%s", source, ours)
	}
}
