package schema

import "strings"

// IndexFold is strings.Index ignoring ASCII case, for a lower-case sub.
// It runs on every statement of a statement-format stream (the preparer
// looks for MATCH ... AGAINST, the dependency tracker for CONNECTION_ID):
// one pass that compares further only where the first letter matches,
// without the copy strings.ToLower would make.
func IndexFold(s, sub string) int {
	first := sub[0]
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i]|0x20 == first && strings.EqualFold(s[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}
