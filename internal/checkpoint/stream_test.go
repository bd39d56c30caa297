package checkpoint

import "testing"

// TestStreamNames: the default stream keeps the database and lock paraply
// used before streams (a target replicated by an older paraply is stream
// "default" as it is, and an older process and this one still exclude
// each other); another stream's database is told apart from a user's.
func TestStreamNames(t *testing.T) {
	if SchemaOf(DefaultStream) != "paraply" || SchemaOf("") != "paraply" || lockNameOf(DefaultStream) != "paraply.target" {
		t.Fatalf("the default stream moved: database %q, lock %q", SchemaOf(DefaultStream), lockNameOf(DefaultStream))
	}
	if SchemaOf("eu") != "paraply_stream_eu" || lockNameOf("eu") == lockNameOf(DefaultStream) {
		t.Errorf("stream eu: database %q, lock %q", SchemaOf("eu"), lockNameOf("eu"))
	}
	for schema, want := range map[string]string{"paraply": "default", "paraply_stream_eu": "eu", "paraply_stream_": "", "paraply_app": "", "paraply_stream_EU": "", "shop": ""} {
		got, ok := StreamOf(schema)
		if got != want || ok != (want != "") || IsBookkeeping(schema) != ok {
			t.Errorf("StreamOf(%q) = %q, %v; want %q", schema, got, ok, want)
		}
	}
	for _, bad := range []string{"", "EU", "a-b", "a b", "_x", "x`y", "0123456789012345678901234567890123"} {
		if ValidStream(bad) == nil {
			t.Errorf("ValidStream(%q) accepted it", bad)
		}
	}
	for _, good := range []string{"default", "eu", "shard_07", "0"} {
		if err := ValidStream(good); err != nil {
			t.Errorf("ValidStream(%q): %v", good, err)
		}
	}
	if got := BookkeepingSQL("c"); got != `c <> 'paraply' AND c NOT LIKE 'paraply\_stream\_%'` {
		t.Errorf("BookkeepingSQL = %s", got)
	}
}
