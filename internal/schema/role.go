package schema

// CreatedRole returns the role a CREATE ROLE statement creates when it
// does not name the role's administrator (WITH ADMIN): then the account
// that ran it administers the role. ok is false for any other statement.
func CreatedRole(q string) (role string, ok bool) {
	toks := tokenize(cleanQuery(q))
	i := 1
	if len(toks) < 3 || !toks[0].is("CREATE") {
		return "", false
	}
	if toks[i].is("OR") && i+2 < len(toks) && toks[i+1].is("REPLACE") {
		i += 2
	}
	if !toks[i].is("ROLE") {
		return "", false
	}
	i++
	if i+3 < len(toks) && toks[i].is("IF") && toks[i+1].is("NOT") && toks[i+2].is("EXISTS") {
		i += 3
	}
	if i >= len(toks) || !(toks[i].isName() || toks[i].kind == tokString) {
		return "", false
	}
	for _, t := range toks[i+1:] {
		if t.is("ADMIN") {
			return "", false
		}
	}
	return toks[i].val, true
}
