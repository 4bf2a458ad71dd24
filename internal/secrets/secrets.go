// Package secrets finds the values of credentials in text: API keys and
// tokens of the common providers, private key blocks, JSON Web Tokens,
// bearer tokens, and passwords, alone or in a connection string. It does
// no I/O and keeps no state; [Find] is safe for concurrent use.
//
// It is precise first: a false refusal damages memory for good, so it
// matches the shape of a value, never a mention. "The Tavily API key has a
// 1,000/day limit", "password reset emails land in spam" and "uses
// 1Password" hold no secret. Each rule pairs cheap keywords, of which one
// must be in the text before its regular expression runs, with the shape
// of the value, a floor on the value's entropy (a random key's characters
// are varied, "sk-aaaaaaaaaaaaaaaaaaaa" is not a key), the kinds of
// character it must mix, and allowlists for look-alikes: placeholders
// (sk-xxxx…, <your-key>, ${TOKEN}, "your_api_key", a run of one
// character), the keys of documentation (AWS's AKIAIOSFODNN7EXAMPLE,
// anything holding EXAMPLE, jwt.io's token), the defaults of local
// servers in a connection string (postgres:postgres@localhost,
// guest:guest), names of variables (API_KEY_ENV), and values made of words
// (a path, a resource's or a program's name, "SHA256-hashed",
// "min12Chars", "hunter2": see wordy) where a password or a key is named
// only by the words before it. A value
// of a credential's shape that only looks typed by hand (a sequence, a
// pattern repeated) is judged one: nobody needs it kept, and a test key is
// often made so.
package secrets

import (
	"cmp"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// A Finding is one credential's value in a text: what kind it is and
// where its value is. It never holds the value.
type Finding struct {
	Kind       string // what it is, for a sentence: "an OpenAI API key"
	Start, End int    // the value's byte offsets in the text
}

// Kinds lists the kinds of credential Find knows, in the order of its
// rules: the families documented for people.
func Kinds() []string {
	rs := rules()
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		if len(out) == 0 || out[len(out)-1] != r.kind {
			out = append(out, r.kind)
		}
	}
	return out
}

// Find returns the credentials' values text holds, in the order they
// appear, each once: where two rules match the same text, the more
// specific (an earlier rule) is kept. It returns nil when there is none.
//
// A rule's expression runs only where one of its keywords is: anchored at
// the start of each word from back bytes before the keyword up to it
// that starts as the rule's matches do, on at most back+fwd bytes that
// hold what a match needs (a value's run of characters). A text costs one
// pass that finds every rule's keywords at once, and an expression's work
// only where a keyword is; each place is tried once, however many
// keywords are near it.
func Find(text string) []Finding {
	lower := toLower(text)
	hits := keywords().scan(text, lower)
	if len(hits) == 0 {
		return nil
	}
	// By rule, in the order of the rules, each rule's in the order of the
	// text (a counting sort when they are many: one pass).
	rs := rules()
	hits = byRule(hits, len(rs))
	var out []Finding
	for len(hits) > 0 {
		n := 1
		for n < len(hits) && hits[n].rule == hits[0].rule {
			n++
		}
		r := &rs[hits[0].rule]
		out = r.find(text, lower, hits[:n], out)
		hits = hits[n:]
	}
	sortFindings(out)
	return out
}

// byRule returns hits, in the order of the text, ordered by rule (of n)
// and, for a rule, as they were.
func byRule(hits []hit, n int) []hit {
	if len(hits) < 256 {
		slices.SortStableFunc(hits, func(a, b hit) int { return int(a.rule) - int(b.rule) })
		return hits
	}
	at := make([]int, n+1)
	for _, h := range hits {
		at[h.rule+1]++
	}
	for i := 1; i <= n; i++ {
		at[i] += at[i-1]
	}
	out := make([]hit, len(hits))
	for _, h := range hits {
		out[at[h.rule]] = h
		at[h.rule]++
	}
	return out
}

// find appends to out the values r finds at its keywords' hits in text
// (lower, in lower case), but those overlapping a finding of out.
func (r *rule) find(text, lower string, hits []hit, out []Finding) []Finding {
	s := text
	if r.fold {
		s = lower
	}
	back, window := max(r.back, 1), max(r.back, 1)+cmp.Or(r.fwd, 320)
	// Each place is tried once, whichever keyword's hit reaches it: a
	// rule's work is bounded by the text's length, however dense its
	// keywords. After a finding the next starts past it.
	found, next := 0, 0              // findings kept; where the next try may start
	runs := make([]int, len(r.runs)) // where the next run of each of r.runs starts, from next on
	need := -1                       // where r.needs is next, from next on
	for _, h := range hits {
		if found == maxPerRule {
			break
		}
		j := int(h.at)
		for p := max(j-back+1, next, 0); p <= j; p++ {
			next = p + 1
			if p > 0 && wordByte(text[p-1]) || !r.startsAt(s, p, j) {
				continue // a match starts a word, with one of leads
			}
			if !r.inReach(s, p, window, runs) {
				continue // no value in reach
			}
			if r.needs != "" {
				if need < p {
					if need = strings.Index(s[p:], r.needs); need < 0 {
						need = len(s)
					} else {
						need += p
					}
				}
				if need+len(r.needs) > p+window {
					continue // what a match holds is not in reach
				}
			}
			m := r.re.FindStringSubmatchIndex(s[p:min(p+window, len(s))])
			if m == nil {
				continue
			}
			start, end := p+m[0], p+m[1]
			if len(m) >= 4 && m[2] >= 0 {
				start, end = p+m[2], p+m[3]
			}
			if r.accepts(text[start:end]) && !overlaps(out, start, end) {
				out = append(out, Finding{Kind: r.kind, Start: start, End: end})
				found++
				next = p + m[1]
				break
			}
			if r.skip {
				next = p + m[1]
				break
			}
		}
	}
	return out
}

// A hit is a place a rule's keyword is in a text.
type hit struct {
	rule int32 // the rule's index in rules
	at   int32 // where the keyword starts
}

// A keywordIndex finds the keywords of every rule in one pass: by the
// first two bytes of each place of the text, the keywords that start
// with them (in lower case for the rules that compare without case).
type keywordIndex struct {
	first [2][1 << 16]uint16 // [fold][two bytes] → 1 + index in groups; 0 for none
	group [][]keyword
}

type keyword struct {
	word string
	rule int32
}

// keywords is the index of the rules' keywords, made once.
var keywords = sync.OnceValue(func() *keywordIndex {
	x := &keywordIndex{}
	for i, r := range rules() {
		f := 0
		if r.fold {
			f = 1
		}
		for _, w := range r.keywords {
			if len(w) < 2 {
				panic("secrets: a keyword of rule " + r.kind + " is shorter than 2 bytes")
			}
			k := uint16(w[0])<<8 | uint16(w[1])
			if x.first[f][k] == 0 {
				x.group = append(x.group, nil)
				x.first[f][k] = uint16(len(x.group))
			}
			g := x.first[f][k] - 1
			x.group[g] = append(x.group[g], keyword{w, int32(i)})
		}
	}
	return x
})

// scan returns the hits of every rule's keywords in text, whose lower
// case is lower, in the order of the text. A rule is hit once at a place,
// whichever of its keywords is there.
func (x *keywordIndex) scan(text, lower string) []hit {
	var hits []hit
	for i := 0; i+1 < len(text); i++ {
		for f, s := range [2]string{text, lower} {
			g := x.first[f][uint16(s[i])<<8|uint16(s[i+1])]
			if g == 0 {
				continue
			}
			for _, k := range x.group[g-1] {
				if strings.HasPrefix(s[i:], k.word) && (len(hits) == 0 || hits[len(hits)-1] != hit{k.rule, int32(i)}) {
					hits = append(hits, hit{k.rule, int32(i)})
				}
			}
		}
	}
	return hits
}

// wordByte reports a byte that may be part of a token: a letter, a digit,
// '_' or '-'.
func wordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}

// maxPerRule bounds the findings one rule keeps in one text: a text that
// holds more of one kind is refused for the first already. Matches a rule
// rejects (placeholders, mentions) are not counted: any number of them
// hides no credential after them.
const maxPerRule = 64

func overlaps(fs []Finding, start, end int) bool {
	for _, f := range fs {
		if start < f.End && f.Start < end {
			return true
		}
	}
	return false
}

// sortFindings sorts a few findings by position (insertion sort: there
// are rarely more than one).
func sortFindings(fs []Finding) {
	for i := 1; i < len(fs); i++ {
		for j := i; j > 0 && fs[j].Start < fs[j-1].Start; j-- {
			fs[j], fs[j-1] = fs[j-1], fs[j]
		}
	}
}

// A rule finds one kind of credential.
type rule struct {
	kind string
	// keywords: the expression runs only where one is, anchored at the
	// start of a word from back bytes before it (1 when 0: at the keyword
	// itself), on back+fwd bytes (fwd 320 when 0); fold matches keywords
	// and expression with the text in lower case (both are written in lower
	// case), and judges the value as it is written.
	keywords  []string
	fold      bool
	back, fwd int
	// leads, when set, are the texts a match starts with (in lower case
	// when fold): other places are not tried. Without them, a match that
	// starts before its keyword (back > 1) holds no space up to it.
	leads []string
	// runs, when set, are what a match needs in reach: runs of bytes of a
	// set, so long (the value; a ':' or '='). A place whose window lacks
	// one is not tried: in text dense with keywords, few windows hold a
	// value.
	runs []valueRun
	// needs, when set, is a text a match holds (in lower case when fold):
	// a place whose window lacks it is not tried.
	needs string
	// skip: a match rejected is passed whole, as a finding is (a token
	// inside a token rejected is no other).
	skip bool
	// re matches the value: its first group when it has one, else the
	// whole match.
	re *regexp.Regexp
	// entropy is the floor on the value's Shannon entropy, in bits a
	// character; classes the fewest kinds of character (lower, upper,
	// digit, other) the value mixes: 1 for a value whose prefix alone
	// makes it a credential, 2 where the value may join words with '-'
	// (a name like sk-proj-billing-dashboard is no key), 3 for a value
	// known by its name only.
	entropy float64
	classes int
	// judge, when set, judges the value instead of entropy and classes:
	// a password a person chose is short and plain next to a key.
	judge func(v string) bool
}

// A valueRun is a run of at least min bytes of a set.
type valueRun struct {
	min int
	set *[256]bool
}

// next returns where the first run of r in s starts from p on; len(s)
// when none.
func (r valueRun) next(s string, p int) int {
	n := 0
	for i := p; i < len(s); i++ {
		if !r.set[s[i]] {
			n = 0
			continue
		}
		if n++; n == r.min {
			return i - n + 1
		}
	}
	return len(s)
}

// runOf is a valueRun of min bytes of those in chars, or of any but those
// after a '^'.
func runOf(min int, chars string) valueRun {
	set := new([256]bool)
	not := strings.HasPrefix(chars, "^")
	if not {
		chars = chars[1:]
	}
	for c := range 256 {
		set[c] = strings.IndexByte(chars, byte(c)) >= 0 != not
	}
	return valueRun{min, set}
}

// inReach reports whether each of r.runs starts in the window of
// window bytes at p of s; next holds, for each, where its next run starts
// as found from an earlier place (0 before any).
func (r *rule) inReach(s string, p, window int, next []int) bool {
	for i, run := range r.runs {
		if next[i] < p || next[i] == 0 {
			next[i] = run.next(s, p)
		}
		if next[i]-p > window-run.min {
			return false
		}
	}
	return true
}

// startsAt reports whether a match may start at p of s (the text, or its
// lower case when fold) for the keyword at j.
func (r *rule) startsAt(s string, p, j int) bool {
	if r.leads == nil {
		return p == j || !strings.ContainsAny(s[p:j], " \t\r\n")
	}
	for _, l := range r.leads {
		if strings.HasPrefix(s[p:], l) {
			return true
		}
	}
	return false
}

// accepts judges a value the expression matched.
func (r *rule) accepts(v string) bool {
	if r.judge != nil {
		return r.judge(v) && !placeholder(v)
	}
	return entropy(v) >= r.entropy && classes(v) >= r.classes && !placeholder(v)
}

// toLower lowers ASCII letters only, keeping every byte offset.
func toLower(s string) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			if b == nil {
				b = []byte(s)
			}
			b[i] = c + 'a' - 'A'
		}
	}
	if b == nil {
		return s
	}
	return string(b)
}

// placeholders are the texts a placeholder holds, in lower and upper case
// and capitalised, made once.
var placeholders = sync.OnceValue(func() []string {
	var out []string
	for _, p := range []string{"xxxx", "****", "....", "…", "<", ">", "${", "{{", "%s", "example", "your", "placeholder", "redacted", "dummy", "sample", "changeme", "insert", "replace"} {
		for _, v := range []string{p, strings.ToUpper(p), strings.ToUpper(p[:1]) + p[1:]} {
			if !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	return out
})

// placeholder reports a value that stands for a credential in
// documentation or a template, rather than being one.
func placeholder(v string) bool {
	// In lower or upper case or capitalised, not mixed: a random key may
	// hold "xXxX".
	for _, p := range placeholders() {
		if strings.Contains(v, p) {
			return true
		}
	}
	// A run of one character: "0000000000", "aaaaaaaaaa".
	run := 1
	for i := 1; i < len(v); i++ {
		if v[i] == v[i-1] {
			run++
			if run >= 6 {
				return true
			}
		} else {
			run = 1
		}
	}
	return false
}

// entropy is the Shannon entropy of s's bytes, in bits a byte.
func entropy(s string) float64 {
	if s == "" {
		return 0
	}
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	n := float64(len(s))
	e := 0.0
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			e -= p * math.Log2(p)
		}
	}
	return e
}

// classes counts the kinds of character s mixes: lower-case letters,
// upper-case letters, digits, and others ('_', '-' and '.' do not count:
// they join the words of names).
func classes(s string) int {
	var lower, upper, digit, other int
	for _, r := range s {
		switch {
		case 'a' <= r && r <= 'z':
			lower = 1
		case 'A' <= r && r <= 'Z':
			upper = 1
		case '0' <= r && r <= '9':
			digit = 1
		case r == '_' || r == '-' || r == '.':
		default:
			other = 1
		}
	}
	return lower + upper + digit + other
}

// wordy reports a value made of words, as names, paths and phrases are,
// not of random characters. Made of letters, digits and the '-', '_', '.'
// and '/' that join words, it is cut at each of these, between letters
// and digits, and where a word in capitals starts (min12Chars → min 12
// Chars; HMAC-SHA256/base64url → HMAC SHA 256 base 64 url); its words
// are three letters long or more on average and hold four fifths of its
// letters or more, and it holds at most two runs of digits, at most one
// letter alone (the O of OAuth, the X of X-Amz) and at most one short
// word that is not pronounceable (cfg, src). A random value is cut into
// many short runs: it is rarely wordy (see TestWordyRandom).
func wordy(v string) bool {
	if strings.Trim(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_./") != "" {
		return false // a symbol: P@ssw0rd!, Tr0ub4dor&3
	}
	digits, single, vowelless, words, letters, inWords := 0, 0, 0, 0, 0, 0
	word := func(w string) {
		switch {
		case w == "":
		case w[0] >= '0' && w[0] <= '9':
			digits++
		default:
			words++
			letters += len(w)
			if len(w) >= 3 {
				inWords += len(w)
			}
			if len(w) == 1 {
				single++
			} else if len(w) >= 3 && !pronounceable(w) {
				vowelless++
				if len(w) >= 5 {
					vowelless += 2 // no word
				}
			}
		}
	}
	kind := func(c byte) int { // 0 other, 1 lower, 2 upper, 3 digit
		switch {
		case 'a' <= c && c <= 'z':
			return 1
		case 'A' <= c && c <= 'Z':
			return 2
		case '0' <= c && c <= '9':
			return 3
		}
		return 0
	}
	start := 0
	for i := 0; i <= len(v); i++ {
		if i == len(v) {
			word(v[start:])
			break
		}
		k := kind(v[i])
		if k == 0 {
			word(v[start:i])
			start = i + 1
			continue
		}
		if i == start {
			continue
		}
		p := kind(v[i-1])
		switch {
		case p == 3 && k != 3, p != 3 && k == 3, p == 1 && k == 2:
			word(v[start:i]) // a digit starts or ends, or a capital after lower case
			start = i
		case p == 2 && k == 1 && i-1 > start:
			word(v[start : i-1]) // HTMLParser: HTML, then Parser
			start = i - 1
		}
	}
	return words > 0 && digits <= 2 && single <= 1 && vowelless <= 1 && 5*inWords >= 4*letters && letters >= 3*words
}

// pronounceable reports a word with a vowel and no five consonants in a
// row, as words of names are (Middleware, Postgres, strengths).
func pronounceable(w string) bool {
	vowel, run := false, 0
	for i := 0; i < len(w); i++ {
		if strings.IndexByte("aeiouyAEIOUY", w[i]) >= 0 {
			vowel, run = true, 0
		} else if run++; run >= 5 {
			return false
		}
	}
	return vowel
}

// isWord reports a pronounceable word of four letters or more, in lower
// case, capitalised or in capitals: a folder's name.
func isWord(w string) bool {
	if len(w) < 4 || !pronounceable(w) {
		return false
	}
	rest := w[1:]
	if strings.Trim(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == "" {
		return true
	}
	return strings.Trim(w[:1], "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") == "" && strings.Trim(rest, "abcdefghijklmnopqrstuvwxyz") == ""
}

// memberAccess reports a name of a program's value, a.b.c (cfg.dbPass,
// os.environ): names joined by dots.
func memberAccess(v string) bool {
	parts := strings.Split(v, ".")
	if len(parts) < 2 {
		return false
	}
	for _, p := range parts {
		if p == "" || p[0] >= '0' && p[0] <= '9' || strings.Trim(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") != "" {
			return false
		}
	}
	return true
}

// looksLikePassword judges the value of "password: …": one word a person
// chose, not a phrase, a name or a reference to where it is kept. It must
// be 6 to 64 characters mixing letters with digits or symbols, and not be
// a variable, a number, or the name of a password manager.
func looksLikePassword(v string) bool {
	v = strings.TrimRight(v, ".,;:!?)]}'\"")
	n := utf8.RuneCountInString(v)
	if n < 6 || n > 64 {
		return false
	}
	l := toLower(v)
	for _, m := range []string{"1password", "bitwarden", "lastpass", "keepass", "keychain", "dashlane", "vault", "manager", "protected", "required", "optional", "hidden", "masked", "env", "secret", "token", "password", "passwd"} {
		if strings.Contains(l, m) {
			return false
		}
	}
	switch v[0] {
	case '$', '%', '{', '(', '[', '@', '/', '\\', '#', '&', '*', '~', '.':
		return false // a variable, a reference, a path or a mask
	}
	if strings.Contains(v, "://") || strings.Contains(v, "(") {
		return false // a link or a call
	}
	letters := strings.ContainsFunc(v, func(r rune) bool { return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' })
	if !letters {
		return false // a number, a date, a length
	}
	c := classes(v)
	if c < 2 {
		return false // a word
	}
	// An identifier: upper-case words joined by '_' (DB_PASSWORD), a
	// program's value (cfg.dbPass), or words with a number (SHA256-hashed,
	// 6-digit, min12Chars, test_login2, and hunter2, the joke) is a name or
	// a phrase, not a password.
	if strings.Trim(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == "" && strings.Contains(v, "_") || memberAccess(v) || wordy(v) {
		return false
	}
	return entropy(v) >= 2.5
}

// looksLikePasswordIs judges the value of "the password is …", where a
// phrase goes on ("is WPA3-only", "is 2nd-class"): a password mixing three
// kinds of character.
func looksLikePasswordIs(v string) bool {
	return looksLikePassword(v) && classes(strings.TrimRight(v, ".,;:!?)]}'\"")) >= 3
}

// looksLikeKey judges a value named as a key, token or secret: random,
// mixing three kinds of character ('/' does not count), and not a path, a
// resource's name or a program's value made of words, nor a key that is
// public (Stripe's publishable keys, SSH's public keys, an Ethereum
// address), nor a path with two folders named by words.
func looksLikeKey(v string) bool {
	for _, p := range []string{"pk_live_", "pk_test_", "AAAAB3NzaC1", "AAAAC3NzaC1", "AAAAE2VjZHNh"} {
		if strings.HasPrefix(v, p) {
			return false // a key that is public: Stripe's publishable, SSH's
		}
	}
	words := 0
	for _, seg := range strings.Split(v, "/") {
		if isWord(seg) {
			words++
		}
	}
	if words >= 2 {
		return false // a path: uploads/Avatars/<hash>/original
	}
	if len(v) == 42 && strings.HasPrefix(v, "0x") && strings.Trim(v[2:], "0123456789abcdefABCDEF") == "" {
		return false // an Ethereum address: a token's contract, a wallet
	}
	return entropy(v) >= 3.7 && classes(strings.ReplaceAll(v, "/", "")) >= 3 && !wordy(v) && !memberAccess(v)
}

// looksLikeBearer judges a bearer token: random, not an identifier
// (AuthenticationMiddleware, ACCESS_TOKEN_FROM_STEP_2), with a digit and
// 20 characters or more, or 32 or more.
func looksLikeBearer(v string) bool {
	if entropy(v) < 3.5 || classes(v) < 2 || wordy(v) || memberAccess(v) {
		return false
	}
	return len(v) >= 32 || strings.ContainsAny(v, "0123456789")
}

// urlPassword judges the password of a URL (scheme://user:password@host):
// any but a placeholder: "password", "****", "${DB_PASS}". A short one
// ("user:pass@host") is a password still: it opens the database.
func urlPassword(v string) bool {
	switch toLower(v) {
	case "password", "passwd", "pass", "pwd", "secret", "x", "token", "apikey", "api_key", "...",
		// The defaults of local servers, in every tutorial: no secret.
		"postgres", "guest", "root", "admin", "user", "test", "mysql", "redis", "mongo", "default":
		return false
	}
	switch v[0] {
	case '$', '%', '{', '[', '*':
		return false // a variable, a template or a mask
	}
	// A name standing for the password: PASS, DB_PASSWORD,
	// personal-access-token.
	if strings.Trim(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") == "" || strings.Trim(v, "abcdefghijklmnopqrstuvwxyz") != "" && strings.Trim(v, "abcdefghijklmnopqrstuvwxyz-_") == "" {
		return false
	}
	return true
}

// jwtExample reports the example token of jwt.io (its claims: "sub"
// "1234567890", "name" "John Doe"), in every page about JSON Web Tokens.
func jwtExample(v string) bool {
	return strings.Contains(v, "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIi")
}

// rules are compiled once, when Find is first called.
var rules = sync.OnceValue(func() []rule {
	// Each expression is anchored: it matches where a word starts (Find
	// checks that the byte before is no letter, digit, '_' or '-').
	re := func(expr string) *regexp.Regexp { return regexp.MustCompile(`^(?:` + expr + `)`) }
	const (
		alnum    = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
		b64      = alnum + "+/="
		notValue = "^ \t\r\n\"'`,;" // what a password may be made of
	)
	// What may stand between a password's or key's name and its value:
	// whom or what it is for ("the API key for the weather service: …").
	const gap = `(?:\s+(?:for|of|to|on)\s[^:=\n"']{1,40}?)?`
	return []rule{
		// A private key block, its lines broken by newlines or by the \n
		// escapes of a JSON string (a Google service account's key file).
		{kind: "a private key", runs: []valueRun{runOf(40, b64)}, keywords: []string{"PRIVATE KEY"}, back: 48, fwd: 640,
			leads:   []string{"-----BEGIN"},
			re:      re(`-----BEGIN[ A-Z0-9]{0,30}PRIVATE KEY(?: BLOCK)?-----(?:\s|\\n|[A-Za-z-]+:[^\n]*\n)*([A-Za-z0-9+/=]{40,})`),
			entropy: 4.0, classes: 3},
		// A private key's header that ends the text or is followed by the
		// start of a body: a key written in parts, its header first (nothing
		// ordinary ends a text so). Where the rule above finds the body, the
		// two overlap, and its finding is kept.
		{kind: "a private key", keywords: []string{"PRIVATE KEY"}, back: 48, fwd: 640,
			leads: []string{"-----BEGIN"},
			re:    re(`(-----BEGIN[ A-Z0-9]{0,30}PRIVATE KEY(?: BLOCK)?-----[ \t]*(?:(?:\r?\n|\\n)?$|(?:\r?\n|\\n)[A-Za-z0-9+/=]{16}))`),
			judge: func(string) bool { return true }},
		{kind: "an Anthropic API key", keywords: []string{"sk-ant-"},
			re: re(`(sk-ant-[a-z]{3,8}\d{0,3}-[A-Za-z0-9_\-]{32,})`), entropy: 3.0, classes: 2},
		{kind: "an OpenAI API key", keywords: []string{"sk-proj-", "sk-svcacct-", "sk-admin-", "sk-None-"},
			re: re(`(sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_\-]{40,})`), judge: func(v string) bool {
				return entropy(v) >= 3.0 && classes(v) >= 2 && !wordy(v) // not sk-proj-billing-dashboard-2025-q3
			}},
		{kind: "an OpenAI API key", keywords: []string{"T3BlbkFJ"}, back: 24,
			re: re(`(sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20})`), entropy: 3.0, classes: 1},
		{kind: "an API key (sk-…)", keywords: []string{"sk-"},
			re: re(`(sk-[A-Za-z0-9]{32,})(?:[^A-Za-z0-9_\-]|$)`), entropy: 3.5, classes: 2},
		{kind: "an AWS access key ID", keywords: []string{"AKIA", "ASIA", "ABIA", "ACCA", "A3T"},
			re: re(`((?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16})(?:[^A-Za-z0-9]|$)`), entropy: 3.0, classes: 1},
		{kind: "an AWS secret access key", runs: []valueRun{runOf(40, alnum+"/+")}, keywords: []string{"aws", "secret"}, fold: true, leads: []string{"aws", "secret"}, back: 8, fwd: 160,
			re:      re(`(?:aws|secret)[a-z_ \-]{0,24}(?:secret|key)["']?\s*(?:[:=]|=>|\bis\b)\s*["']?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)`),
			entropy: 4.0, classes: 3},
		{kind: "a GitHub token", keywords: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"},
			re: re(`(gh[pousr]_[A-Za-z0-9]{36,255})(?:[^A-Za-z0-9_]|$)`), entropy: 3.0, classes: 1},
		{kind: "a GitHub token", keywords: []string{"github_pat_"},
			re: re(`(github_pat_[A-Za-z0-9_]{50,255})`), entropy: 3.0, classes: 1},
		{kind: "a GitLab token", keywords: []string{"glpat-", "glptt-", "gldt-", "glrt-", "glsoat-"},
			re: re(`((?:glpat|glptt|gldt|glrt|glsoat)-[A-Za-z0-9_\-]{20,})`), entropy: 3.0, classes: 2},
		{kind: "a Slack token", keywords: []string{"xox", "xapp-"},
			re: re(`((?:xox[baprse]|xapp)-\d+-[0-9A-Za-z\-]{10,})`), entropy: 3.0, classes: 1},
		{kind: "a Slack webhook URL", keywords: []string{"hooks.slack.com"},
			re: re(`hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9+/_\-]{20,})`), entropy: 3.0, classes: 1},
		{kind: "a Discord webhook URL", keywords: []string{"/api/webhooks/"}, back: 16,
			re: re(`discord(?:app)?\.com/api/webhooks/\d+/([A-Za-z0-9_\-]{40,})`), entropy: 3.0, classes: 1},
		{kind: "a Stripe secret key", keywords: []string{"sk_live_", "sk_test_", "rk_live_", "rk_test_", "sk_prod_", "whsec_"},
			re: re(`((?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{20,}|whsec_[A-Za-z0-9]{24,})`), entropy: 3.0, classes: 1},
		{kind: "a Google API key", keywords: []string{"AIza"},
			re: re(`(AIza[0-9A-Za-z_\-]{35})(?:[^A-Za-z0-9_\-]|$)`), entropy: 3.0, classes: 1},
		{kind: "a Google OAuth secret or token", keywords: []string{"GOCSPX-", "ya29."},
			re: re(`(GOCSPX-[A-Za-z0-9_\-]{28}|ya29\.[0-9A-Za-z_\-]{30,})`), entropy: 3.0, classes: 1},
		{kind: "a SendGrid API key", keywords: []string{"SG."},
			re: re(`(SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43})`), entropy: 3.0, classes: 1},
		{kind: "a Twilio API key", keywords: []string{"SK"},
			re: re(`(SK[0-9a-f]{32})(?:[^A-Za-z0-9]|$)`), entropy: 3.0, classes: 2},
		{kind: "an npm token", keywords: []string{"npm_"},
			re: re(`(npm_[A-Za-z0-9]{36})(?:[^A-Za-z0-9]|$)`), entropy: 3.0, classes: 1},
		{kind: "a PyPI token", keywords: []string{"pypi-AgE"},
			re: re(`(pypi-AgE[A-Za-z0-9_\-]{50,})`), entropy: 3.0, classes: 1},
		{kind: "a Hugging Face token", keywords: []string{"hf_"},
			re: re(`(hf_[A-Za-z0-9]{34,40})(?:[^A-Za-z0-9_]|$)`), entropy: 3.0, classes: 1},
		{kind: "a DigitalOcean token", keywords: []string{"dop_v1_", "doo_v1_", "dor_v1_"},
			re: re(`(do[opr]_v1_[a-f0-9]{64})`), entropy: 3.0, classes: 1},
		{kind: "a Shopify access token", keywords: []string{"shpat_", "shpca_", "shppa_", "shpss_"},
			re: re(`(shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32})`), entropy: 3.0, classes: 1},
		{kind: "a Telegram bot token", keywords: []string{":AA"}, back: 12,
			re: re(`([0-9]{8,10}:AA[0-9A-Za-z_\-]{33})(?:[^A-Za-z0-9_\-]|$)`), entropy: 3.0, classes: 1},
		{kind: "an API key of a model provider", keywords: []string{"gsk_", "xai-", "r8_", "tvly-", "pplx-", "csk-"},
			re: re(`((?:gsk_|xai-|r8_|tvly-(?:dev-|prod-)?|pplx-|csk-)[A-Za-z0-9]{30,})`), entropy: 3.0, classes: 1},
		// Fireworks: its keys mix cases; fw_ and a hash is a firmware's name.
		{kind: "an API key of a model provider", keywords: []string{"fw_"},
			re: re(`(fw_[A-Za-z0-9]{30,})`), entropy: 3.0, classes: 3},
		{kind: "a Mailgun or Linear or Notion API key", keywords: []string{"lin_api_", "ntn_", "secret_"},
			re: re(`(lin_api_[A-Za-z0-9]{40}|ntn_[A-Za-z0-9]{40,}|secret_[A-Za-z0-9]{43})(?:[^A-Za-z0-9]|$)`), entropy: 3.5, classes: 2},
		// Mailgun's key-<32 hex> only where Mailgun is named: a cache's
		// key-<md5> is no key.
		{kind: "a Mailgun or Linear or Notion API key", runs: []valueRun{runOf(32, "0123456789abcdef")}, keywords: []string{"mailgun"}, fold: true, fwd: 120,
			re: re(`mailgun[^\n]{0,80}?[^a-z0-9_\-](key-[0-9a-f]{32})(?:[^a-z0-9]|$)`), entropy: 3.5, classes: 2},
		// Keys of 32 hex digits, only where their provider and a key are
		// named (as gitleaks does): a hash alone is no key.
		{kind: "a Datadog, OpenWeatherMap or Algolia API key", runs: []valueRun{runOf(32, "0123456789abcdef")}, keywords: []string{"datadog", "dd_api_key", "dd_app_key", "openweather", "algolia"}, fold: true, fwd: 120,
			re: re(`(?:dd_api_key|dd_app_key|(?:datadog|openweather|algolia)[^\n]{0,40}?key)[^\n]{0,30}?[^a-z0-9_\-]([0-9a-f]{32})(?:[^a-z0-9_\-]|$)`), entropy: 3.0, classes: 2},
		{kind: "a JSON Web Token", keywords: []string{"eyJ"}, fwd: 8192, skip: true,
			re: re(`(eyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,})`), judge: func(v string) bool {
				return entropy(v) >= 3.5 && classes(v) >= 3 && !jwtExample(v)
			}},
		{kind: "a bearer token", keywords: []string{"bearer"}, fold: true,
			re: re(`bearer\s+([A-Za-z0-9._~+/\-]{20,}=*)`), judge: looksLikeBearer},
		{kind: "basic authentication credentials", runs: []valueRun{runOf(12, alnum+"+/")}, keywords: []string{"basic "}, fold: true, leads: []string{"authorization"}, back: 40, fwd: 120,
			re: re(`authorization["']?\s*[:=]\s*["']?basic\s+([A-Za-z0-9+/]{12,}={0,2})`), entropy: 3.0, classes: 2},
		{kind: "a password in a connection string", runs: []valueRun{runOf(1, "@")}, keywords: []string{"://"}, back: 24, fwd: 200,
			re: re(`[A-Za-z][A-Za-z0-9+.\-]{1,20}://[^\s:/@'"?#]{0,64}:([^\s@/'"?]{1,128})@[A-Za-z0-9\[]`), judge: urlPassword},
		// "password: …", and "pass: …" only so.
		{kind: "a password", runs: []valueRun{runOf(6, notValue), runOf(1, ":=")}, keywords: []string{"pass", "pwd", "pw"}, fold: true, leads: []string{"pa", "pw", "db_pass"}, back: 8, fwd: 140,
			re: re(`(?:(?:password|passwd|pwd|passphrase|passcode|db_pass|pw)["']?` + gap + `|pass["']?)\s*(?:[:=]|=>)\s*["'` + "`" + `]?([^\s"'` + "`" + `,;]{6,64})`), judge: looksLikePassword},
		// "password" in other languages.
		{kind: "a password", runs: []valueRun{runOf(6, notValue)}, keywords: []string{"passwort", "kennwort", "mot de passe", "contraseña", "senha", "パスワード", "密码", "пароль", "Пароль"}, fold: true, fwd: 100,
			re: re(`(?:passwort|kennwort|mot de passe|contraseña|senha|パスワード|密码|пароль|Пароль)\s*(?:[:=]|：)\s*["'` + "`" + `]?([^\s"'` + "`" + `,;]{6,64})`), judge: looksLikePassword},
		// curl's -u user:password.
		{kind: "a password", runs: []valueRun{runOf(6, "^ \t\r\n'\"")}, keywords: []string{"curl "}, fold: true, fwd: 200,
			re: re(`curl\s(?:[^\n]{0,80}?\s)?(?:-u|--user)[ =]["']?[^\s:'"]{1,64}:([^\s'"]{6,128})`), judge: looksLikePassword},
		// "the password is …", where phrases go on too.
		{kind: "a password", runs: []valueRun{runOf(6, notValue)}, keywords: []string{"pass", "pwd", "pw"}, fold: true, leads: []string{"pa", "pw", "db_pass"}, back: 8, fwd: 140,
			needs: "is",
			re:    re(`(?:password|passwd|pwd|passphrase|passcode|pw)` + gap + `\s+is\s+["'` + "`" + `]?([^\s"'` + "`" + `,;]{6,64})`), judge: looksLikePasswordIs},
		{kind: "an API key or token", runs: []valueRun{runOf(20, alnum+"_-./+=")}, keywords: []string{"key", "token", "secret", "credential"}, fold: true, leads: []string{"api", "access", "auth", "secret", "client", "token", "credential", "accountkey"}, back: 16, fwd: 180,
			re:    re(`(?:api[_ \-]?key|apikey|access[_ \-]?key|auth[_ \-]?key|secret[_ \-]?key|client[_ \-]?secret|secret|token|access[_ \-]?token|auth[_ \-]?token|credentials?|accountkey)["']?` + gap + `\s*(?:[:=]|=>|\bis\b)\s*["'` + "`" + `]?([A-Za-z0-9_\-./+=]{20,})`),
			judge: looksLikeKey},
		// A key in an HTTP header named for it.
		{kind: "an API key or token", runs: []valueRun{runOf(20, alnum+"_-")}, keywords: []string{"x-api-key", "api-key", "x-auth-token", "x-access-token"}, fold: true, fwd: 120,
			re:    re(`(?:x-api-key|api-key|x-auth-token|x-access-token)["']?\s*[:=]\s*["']?([A-Za-z0-9_\-]{20,})`),
			judge: looksLikeKey},
		// A long random value named only as a key or a token: "here's my
		// key: …", "X-API-Key: …", "token …".
		{kind: "an API key or token", runs: []valueRun{runOf(32, alnum+"_-+/")}, keywords: []string{"key", "token"}, fold: true, fwd: 200,
			re: re(`(?:key|token)["']?\s*(?:[:=]|=>|\bis\b)?\s*["'` + "`" + `]?([A-Za-z0-9_\-+/]{32,}={0,2})(?:[^A-Za-z0-9_\-./+=]|$)`),
			judge: func(v string) bool {
				return looksLikeKey(v) && strings.ContainsAny(v, "0123456789") && entropy(v) >= 4.0
			}},
	}
})
