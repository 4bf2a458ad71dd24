package memory

import (
	"bytes"
	"fmt"

	"github.com/mdmemory/memory/internal/secrets"
)

// The secret guard. Memory goes into prompts sent to a model provider, is
// synced, backed up, committed to git by people who keep their memory
// folder there, and kept in every version of the history; a credential
// written into it is exposed in all of these. So a change of any memory
// file that adds text holding a credential's value is refused, as a model
// error wrapping [ErrSecret], whoever makes it: the tools (memory_write,
// memory_patch, memory_append, Claude's memory tool), [Store.Write],
// [Store.WriteIf], [Store.Patch], [Store.Append], [Store.SetPersona],
// [Store.Restore] of a version that holds one, the reflector (whose tool
// calls are the model's), compaction's condensed text, and the mdmemory
// command and page, which make their changes through these. The guard is
// a rule of the change path (change.go), so no way in passes beside it.
//
// Only what a change adds is judged: the lines of the new content that the
// file did not hold before. A credential a person left in a file is not
// judged again by an unrelated change, and a change that removes it always
// passes; [Store.Check] reports it. A month's file sealed into a part and
// compaction's archive of the originals move text that is there already,
// and are not judged.
//
// The refusal names the kind of credential and its line, never its value,
// and says what to keep instead: that the credential exists, what it is
// for, and where it is kept.
//
// The detector is internal/secrets's unless Options.Secrets gives another
// (see SecretDetector for the families it knows).

// A SecretDetector finds the values of credentials in text, for the secret
// guard and [Store.Check]: set Options.Secrets to replace the library's
// own. Secrets returns those text holds, in the order they appear; nil
// when there is none. It must be safe for concurrent use, quick (it runs
// under the lock of each change, on the lines the change adds) and free of
// I/O. A detector that finds nothing switches the guard off:
//
//	opts.Secrets = memory.SecretFunc(func(string) []memory.Secret { return nil })
//
// The library's own detector, used when Options.Secrets is nil, knows the
// API keys and tokens of OpenAI, Anthropic, AWS (access key IDs, and secret
// access keys named as such), GitHub, GitLab, Slack (tokens and webhook
// URLs), Discord webhooks, Stripe, Google (API keys, OAuth client secrets
// and access tokens), SendGrid, Twilio, npm, PyPI, Hugging Face,
// DigitalOcean, Shopify, Telegram bots, Groq, xAI, Replicate, Tavily,
// Perplexity, Fireworks, Mailgun, Linear and Notion, and Datadog,
// OpenWeatherMap and Algolia where the provider is named; private key
// blocks (PEM, OpenSSH, PGP; in a JSON string too, as in a Google service
// account's key file); JSON Web Tokens; bearer tokens and basic
// authentication headers; the password of a connection string
// (postgres://user:password@host) or after curl -u; a password written as
// one ("password: …", "the wifi password is …", "Passwort: …") whose
// value looks like one, not a phrase; and a long random value named as an
// API key, token, secret or credential. It is precise first: it matches the shape of a value, never
// a mention, so "the Tavily API key has a 1,000/day limit", "password
// reset emails land in spam" or "uses 1Password" pass, and placeholders
// (sk-xxxx, <your-key>, ${TOKEN}) and documentation's examples
// (AKIAIOSFODNN7EXAMPLE) are no secret.
type SecretDetector interface {
	Secrets(text string) []Secret
}

// A Secret is a credential's value found in a text: what it is and where,
// never the value itself.
type Secret struct {
	// Kind names it for a sentence, with its article: "an OpenAI API key".
	Kind string
	// Start and End are the byte offsets of the value in the text.
	Start, End int
}

// SecretFunc is a function that is a [SecretDetector].
type SecretFunc func(text string) []Secret

// Secrets calls f.
func (f SecretFunc) Secrets(text string) []Secret { return f(text) }

// builtinSecrets is the library's detector, internal/secrets.
func builtinSecrets(text string) []Secret {
	found := secrets.Find(text)
	if len(found) == 0 {
		return nil
	}
	out := make([]Secret, len(found))
	for i, f := range found {
		out[i] = Secret{Kind: f.Kind, Start: f.Start, End: f.End}
	}
	return out
}

// secrets returns the credentials in text, by the store's detector. A
// detector's finding out of text's bounds is dropped.
func (s *Store) secrets(text string) []Secret {
	var found []Secret
	if s.opts.Secrets != nil {
		found = s.opts.Secrets.Secrets(text)
	} else {
		found = builtinSecrets(text)
	}
	out := found[:0]
	for _, f := range found {
		if 0 <= f.Start && f.Start <= f.End && f.End <= len(text) {
			out = append(out, f)
		}
	}
	return out
}

// secretGuard refuses a change that adds text holding a credential: see
// the secret guard above.
func (s *Store) secretGuard(c *change) error {
	if c.as == "seal" || c.t.archived {
		return nil // text moved, not added
	}
	if found := s.addedSecrets(c.old, c.data, true); len(found) > 0 {
		return refuseSecret(c, found[0].Kind, lineAt(c.data, found[0].Start))
	}
	return nil
}

// Around the lines a change adds, the text judged with them: a
// credential's name may be on the line before its value ("password:",
// then the value), a key's header lines before its body.
const (
	contextBefore = 1 << 10 // bytes of whole lines back to a blank line or a heading
	contextAfter  = 3       // lines
)

// addedSecrets returns the credentials whose values the lines of data
// (a file's new content) that old (its content before, nil for none) does
// not hold bring, with offsets in data: each part of added lines is judged
// with the lines around it (see contextBefore), and a credential is kept
// when its value overlaps the added lines. With first, it stops at the
// first part that holds one.
func (s *Store) addedSecrets(old, data []byte, first bool) []Secret {
	var out []Secret
	for _, sp := range addedLines(old, data) {
		lo, hi := contextOf(data, sp[0], sp[1])
		for _, f := range s.secrets(string(data[lo:hi])) {
			f.Start, f.End = lo+f.Start, lo+f.End
			if f.Start < sp[1] && sp[0] < f.End && (len(out) == 0 || out[len(out)-1] != f) {
				out = append(out, f)
			}
		}
		if first && len(out) > 0 {
			break
		}
	}
	return out
}

// contextOf returns the part of data judged with the added lines
// data[lo:hi]: the lines before them back to a blank line or a heading
// (the heading kept), at most contextBefore bytes of whole lines, and
// contextAfter lines after them, up to a blank line.
func contextOf(data []byte, lo, hi int) (int, int) {
	start := lo
	for start > 0 {
		i := bytes.LastIndexByte(data[:start-1], '\n') + 1 // the line before
		line := data[i:start]
		if len(bytes.TrimSpace(line)) == 0 || lo-i > contextBefore {
			break
		}
		start = i
		if line[0] == '#' {
			break
		}
	}
	end := hi
	for range contextAfter {
		if end >= len(data) {
			break
		}
		e := lineEnd(data, end)
		if len(bytes.TrimSpace(data[end:e])) == 0 {
			break
		}
		end = e
	}
	return start, end
}

// secretInstead says what to keep in memory instead of a credential.
const secretInstead = "Keep the credential out of memory: record only that it exists, what it is for and where it is kept (such as \"- OpenAI API key for the side project: in 1Password, item 'OpenAI'\"), never its value"

// refuseSecret words the guard's refusal of the change c, whose new
// content holds a credential of the kind on line.
func refuseSecret(c *change, kind string, line int) error {
	p := c.t.path
	switch c.op {
	case "restore":
		return modelErr(c.op, p, ErrSecret,
			fmt.Sprintf("version %s of %s holds %s on line %d, which memory never keeps", versionOf(c.data), p, kind, line),
			"; nothing was restored. Restore another version, or write the file without the value. "+secretInstead)
	case "compact":
		return modelErr(c.op, p, ErrSecret,
			fmt.Sprintf("the condensed text of %s holds %s on line %d, which memory never keeps", p, kind, line),
			"; the month was left as it was. Remove the value from the month's entries, then compact again")
	}
	return modelErr(c.op, p, ErrSecret,
		fmt.Sprintf("the new text of %s holds %s on line %d: memory goes into every prompt, sync and backup, so it never keeps a credential's value", p, kind, line),
		"; nothing was written. "+secretInstead+", and write the text again without it")
}

// addedLines returns the parts of data, a file's new content, made of the
// lines that old, its content before (nil for a new file), does not hold,
// as [start, end) offsets in data, in order; lines added next to each
// other are one part. A change's usual forms cost a comparison of bytes:
// lines appended, a line replaced (the summary line an append refreshes)
// with lines appended; otherwise the lines that differ between the common
// start and end of the two are compared as a set.
func addedLines(old, data []byte) [][2]int {
	if old == nil {
		return [][2]int{{0, len(data)}}
	}
	var out [][2]int
	add := func(lo, hi int) {
		if lo >= hi {
			return
		}
		if n := len(out); n > 0 && out[n-1][1] == lo {
			out[n-1][1] = hi
			return
		}
		out = append(out, [2]int{lo, hi})
	}
	i, j := 0, 0 // where old and data are compared from, at a line's start
	for round := 0; ; round++ {
		n := commonPrefix(old[i:], data[j:])
		if j+n == len(data) {
			return out // the rest of data is in old
		}
		if i+n == len(old) && (n == 0 || old[i+n-1] == '\n') {
			add(j+n, len(data)) // lines appended
			return out
		}
		k := bytes.LastIndexByte(data[j:j+n], '\n') + 1
		i, j = i+k, j+k
		eo, ed := lineEnd(old, i), lineEnd(data, j)
		if round < 4 && bytes.HasPrefix(data[ed:], old[eo:]) {
			// A line replaced, the rest of old kept, maybe lines appended.
			add(j, ed)
			i, j = eo, ed
			continue
		}
		break
	}
	// The lines between the common start and the common end: data's that
	// old's are not.
	s := commonSuffix(old[i:], data[j:])
	hiO, hiD := len(old)-s, len(data)-s
	if hiD > j && data[hiD-1] != '\n' {
		// The common end starts inside a line: that line differs.
		d := lineEnd(data, hiD) - hiD
		hiO, hiD = hiO+d, hiD+d
	}
	have := map[string]bool{}
	for l := range bytes.Lines(old[i:hiO]) {
		have[string(bytes.TrimRight(l, "\r\n"))] = true
	}
	at := j
	for l := range bytes.Lines(data[j:hiD]) {
		if !have[string(bytes.TrimRight(l, "\r\n"))] {
			add(at, at+len(l))
		}
		at += len(l)
	}
	return out
}

// lineEnd returns the offset just after the line of b that starts at i:
// after its newline, or len(b).
func lineEnd(b []byte, i int) int {
	if n := bytes.IndexByte(b[i:], '\n'); n >= 0 {
		return i + n + 1
	}
	return len(b)
}

// commonPrefix returns the length of the longest common prefix of a and b,
// comparing blocks at once.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for _, block := range [...]int{1024, 64} {
		for ; i+block <= n && bytes.Equal(a[i:i+block], b[i:i+block]); i += block {
		}
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// commonSuffix returns the length of the longest common suffix of a and b.
func commonSuffix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for _, block := range [...]int{1024, 64} {
		for ; i+block <= n && bytes.Equal(a[len(a)-i-block:len(a)-i], b[len(b)-i-block:len(b)-i]); i += block {
		}
	}
	for i < n && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	return i
}
