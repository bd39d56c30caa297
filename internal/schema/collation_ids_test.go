package schema

import "testing"

// TestCollationIDs: a query event names the session's character sets by
// collation ID, up to MariaDB's UCA 14.0 ones beyond 255; each resolves to
// its character set (what SET character_set_client takes).
func TestCollationIDs(t *testing.T) {
	for _, c := range []struct {
		f       Flavor
		id      int
		charset string
	}{
		{MariaDB, 8, "latin1"}, {MariaDB, 33, "utf8mb3"}, {MariaDB, 45, "utf8mb4"},
		{MariaDB, 2304, "utf8mb4"}, {MariaDB, 2048, "utf8mb3"}, {MariaDB, 3072, "utf32"},
		{MariaDB, 608, "utf8mb4"}, {MariaDB, 1032, "latin1"},
		{MySQL, 255, "utf8mb4"}, {MySQL, 2304, ""}, {MariaDB, 99999, ""},
	} {
		if got := CharsetOfCollationID(c.f, c.id); got != c.charset {
			t.Errorf("flavor %v, ID %d: character set %q, want %q", c.f, c.id, got, c.charset)
		}
	}
	if got := CollationByID(MariaDB, 2304); got != "utf8mb4_uca1400_ai_ci" {
		t.Errorf("MariaDB's 2304 is %q", got)
	}
}
