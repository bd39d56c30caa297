package schema

import "strings"

// IndexFold is strings.Index ignoring ASCII case, for a lower-case sub.
// It runs on every statement of a statement-format stream (the preparer
// looks for MATCH ... AGAINST, the dependency tracker for CONNECTION_ID),
// and most statements hold neither: it jumps from one occurrence of sub's
// first letter to the next (strings.IndexByte, in either case) and
// compares only there, without the copy strings.ToLower would make.
func IndexFold(s, sub string) int {
	lower := sub[0]
	upper := lower
	if 'a' <= lower && lower <= 'z' {
		upper = lower - ('a' - 'A')
	}
	last := len(s) - len(sub) // the last position sub can start at
	// nextLower and nextUpper are the next positions, from i on, of
	// either case of the first letter (len(s) when there is none).
	nextLower, nextUpper := -1, -1
	for i := 0; i <= last; {
		if nextLower < i {
			nextLower = indexByteFrom(s, lower, i)
		}
		if nextUpper < i {
			nextUpper = indexByteFrom(s, upper, i)
		}
		i = min(nextLower, nextUpper)
		if i > last {
			break
		}
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return i
		}
		i++
	}
	return -1
}

// indexByteFrom is the index of the first c in s at or after from, or
// len(s).
func indexByteFrom(s string, c byte, from int) int {
	if j := strings.IndexByte(s[from:], c); j >= 0 {
		return from + j
	}
	return len(s)
}
