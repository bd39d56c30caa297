package schema

import "testing"

func TestCreatedRole(t *testing.T) {
	for _, c := range []struct {
		q    string
		role string
		ok   bool
	}{
		{"create role test_role1", "test_role1", true},
		{"CREATE OR REPLACE ROLE `r 1` /* c */", "r 1", true},
		{"CREATE ROLE IF NOT EXISTS 'r' -- c", "r", true},
		{"CREATE ROLE r WITH ADMIN CURRENT_USER", "", false},
		{"CREATE USER u", "", false},
		{"GRANT r TO u", "", false},
	} {
		if role, ok := CreatedRole(c.q); role != c.role || ok != c.ok {
			t.Errorf("CreatedRole(%q) = %q, %v, want %q, %v", c.q, role, ok, c.role, c.ok)
		}
	}
}
