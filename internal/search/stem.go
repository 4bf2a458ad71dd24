package search

// This file is a light English stemmer: steps 1 and 5 of M. F. Porter's
// algorithm ("An algorithm for suffix stripping", 1980), which undo
// inflection — plurals, -ed, -ing, a final -y or -e, a doubled final l —
// and leave derivation alone: "reviews", "reviewed" and "reviewing" all
// become "review", "planned" becomes "plan", "cancelled" and "cancels"
// become "cancel", "organized" and "organize" become "organiz", but
// "organization" stays as it is. Stems are index keys, not words.
//
// Two departures from Porter keep short and Latin words whole: a final "s"
// is only removed from words of four letters or more, and never after "u"
// or "i" ("bus", "gas", "analysis" and "status" stay as they are).
//
// Only words of three or more ASCII letters a–z are stemmed; words with
// digits or other letters are returned unchanged.

// stem returns the stem of w, a lower-cased word. It may modify w in place
// and append to it.
func stem(w []byte) []byte {
	if len(w) <= 2 {
		return w
	}
	for _, c := range w {
		if c < 'a' || c > 'z' {
			return w
		}
	}
	w = step1a(w)
	w = step1b(w)
	w = step1c(w)
	return step5(w)
}

// step1a removes plural endings: sses → ss, ies → i, s → "".
func step1a(w []byte) []byte {
	switch {
	case hasSuffix(w, "sses"), hasSuffix(w, "ies"):
		return w[:len(w)-2]
	case hasSuffix(w, "ss"), hasSuffix(w, "us"), hasSuffix(w, "is"):
		return w
	case hasSuffix(w, "s") && len(w) >= 4:
		return w[:len(w)-1]
	}
	return w
}

// step1b removes -eed, -ed and -ing, and repairs the stem that remains:
// "hoping" → "hope", "planned" → "plan", "sized" → "size".
func step1b(w []byte) []byte {
	n := len(w)
	switch {
	case hasSuffix(w, "eed"):
		if measure(w[:n-3]) > 0 {
			return w[:n-1]
		}
		return w
	case hasSuffix(w, "ed") && hasVowel(w[:n-2]):
		w = w[:n-2]
	case hasSuffix(w, "ing") && hasVowel(w[:n-3]):
		w = w[:n-3]
	default:
		return w
	}
	switch {
	case hasSuffix(w, "at"), hasSuffix(w, "bl"), hasSuffix(w, "iz"):
		return append(w, 'e')
	case doubleCons(w):
		if c := w[len(w)-1]; c != 'l' && c != 's' && c != 'z' {
			return w[:len(w)-1]
		}
	case measure(w) == 1 && cvc(w):
		return append(w, 'e')
	}
	return w
}

// step1c turns a final y into i when the stem has a vowel, so that "study"
// meets "studies" and "studied" at "studi".
func step1c(w []byte) []byte {
	if n := len(w); w[n-1] == 'y' && hasVowel(w[:n-1]) {
		w[n-1] = 'i'
	}
	return w
}

// step5 removes a final e from a long enough stem ("revise" → "revis",
// meeting "revised") and a doubled final l ("cancell" → "cancel").
func step5(w []byte) []byte {
	if n := len(w); w[n-1] == 'e' {
		if m := measure(w[:n-1]); m > 1 || m == 1 && !cvc(w[:n-1]) {
			w = w[:n-1]
		}
	}
	if w[len(w)-1] == 'l' && doubleCons(w) && measure(w) > 1 {
		w = w[:len(w)-1]
	}
	return w
}

// cons reports whether w[i] is a consonant: not a, e, i, o or u, and not a
// y that follows a consonant.
func cons(w []byte, i int) bool {
	switch w[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		return i == 0 || !cons(w, i-1)
	}
	return true
}

// measure returns Porter's m: the number of vowel-consonant sequences in w,
// which has the form [C](VC){m}[V].
func measure(w []byte) int {
	m, i := 0, 0
	for i < len(w) && cons(w, i) {
		i++
	}
	for i < len(w) {
		for i < len(w) && !cons(w, i) {
			i++
		}
		if i == len(w) {
			break
		}
		for i < len(w) && cons(w, i) {
			i++
		}
		m++
	}
	return m
}

// hasVowel reports whether w contains a vowel.
func hasVowel(w []byte) bool {
	for i := range w {
		if !cons(w, i) {
			return true
		}
	}
	return false
}

// doubleCons reports whether w ends with a doubled consonant.
func doubleCons(w []byte) bool {
	n := len(w)
	return n >= 2 && w[n-1] == w[n-2] && cons(w, n-1)
}

// cvc reports whether w ends consonant-vowel-consonant with a last
// consonant other than w, x or y: the short syllable of "hop" or "size".
func cvc(w []byte) bool {
	n := len(w)
	if n < 3 || !cons(w, n-1) || cons(w, n-2) || !cons(w, n-3) {
		return false
	}
	c := w[n-1]
	return c != 'w' && c != 'x' && c != 'y'
}

func hasSuffix(w []byte, s string) bool {
	return len(w) >= len(s) && string(w[len(w)-len(s):]) == s
}
