package schema

// ReplicaEvent rewrites a CREATE EVENT or ALTER EVENT statement from the
// binlog the way MariaDB's replica stores the event: an event the source
// enables is created DISABLE ON SLAVE (SLAVESIDE_DISABLED), so that the
// target's event scheduler does not run it too: its changes arrive as rows
// from the source. ok is false for any other statement. The result is the
// statement without its comments (the bodies of versioned comments kept).
func ReplicaEvent(q string) (string, bool) {
	text := cleanQuery(q)
	toks := tokenize(text)
	if len(toks) < 3 || !(toks[0].is("CREATE") || toks[0].is("ALTER")) {
		return "", false
	}
	ev := -1
	for i := 1; i < len(toks) && ev < 0; i++ {
		t := toks[i]
		switch {
		case t.is("EVENT"):
			ev = i
		case t.is("OR"), t.is("REPLACE"), t.is("DEFINER"), t.is("CURRENT_USER"), t.isPunct("="), t.isPunct("("), t.isPunct(")"),
			t.kind == tokIdent, t.kind == tokString, t.kind == tokWord && t.val[0] == '@',
			i > 1 && toks[i-1].isPunct("=") && t.kind == tokWord:
			// CREATE OR REPLACE DEFINER = user@host
		default:
			return "", false
		}
	}
	if ev < 0 {
		return "", false
	}
	// The clauses end at the body (DO), outside parentheses.
	body, depth := len(toks), 0
	for i := ev + 1; i < len(toks); i++ {
		switch t := toks[i]; {
		case t.isPunct("("):
			depth++
		case t.isPunct(")"):
			depth--
		case depth == 0 && t.is("DO"):
			body = i
		}
		if body < len(toks) {
			break
		}
	}
	insertAt := -1
	for i := ev + 1; i < body; i++ {
		t := toks[i]
		switch {
		case t.is("ENABLE"):
			return text[:t.start] + "DISABLE ON SLAVE" + text[t.end:], true
		case t.is("DISABLE"):
			return text, true // DISABLE, or DISABLE ON SLAVE already
		case t.is("COMMENT") && insertAt < 0:
			insertAt = t.start
		}
	}
	if toks[0].is("ALTER") {
		return text, true // the status stays as it was
	}
	if insertAt < 0 {
		if body == len(toks) {
			return text, true // not a statement the server takes
		}
		insertAt = toks[body].start
	}
	return text[:insertAt] + "DISABLE ON SLAVE " + text[insertAt:], true
}
