package memory_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mdmemory/memory"
	"github.com/mdmemory/memory/backendtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeGitHubToken is a GitHub token of the real format, made as fakeKey.
func fakeGitHubToken(seed uint64) string {
	k := backendtest.FakeKey(seed)
	return "gh" + "p_" + k[len(k)-36:]
}

// wantSecretRefused requires err to be the secret guard's refusal, naming
// kind and saying what to keep instead, without the value.
func wantSecretRefused(t *testing.T, err error, kind, value string) {
	t.Helper()
	require.ErrorIs(t, err, memory.ErrSecret)
	h := hint(t, err)
	assert.Contains(t, h, kind)
	assert.Contains(t, h, "where it is kept")
	assert.NotContains(t, h, value)
	assert.NotContains(t, err.Error(), value)
}

// TestSecretGuard: every Store method that adds text refuses a credential's
// value, names its kind and line, never the value, and writes nothing.
func TestSecretGuard(t *testing.T) {
	ctx := context.Background()
	s, dir := open(t, nil)
	require.NoError(t, s.Write(ctx, "facts/user.md", "# User\n\n> Summary: Jianjun\n\n- Name: Jianjun\n"))
	before := readFile(t, dir, "facts/user.md")
	key := backendtest.FakeKey(1)
	line := "- OpenAI key for the side project: " + key

	err := s.Append(ctx, "facts/user.md", line, "")
	wantSecretRefused(t, err, "an OpenAI API key", key)
	assert.Contains(t, hint(t, err), "on line 6")
	assert.Equal(t, before, readFile(t, dir, "facts/user.md"), "nothing written")

	wantSecretRefused(t, s.Write(ctx, "facts/user.md", before+line+"\n"), "an OpenAI API key", key)
	wantSecretRefused(t, s.WriteIf(ctx, "facts/user.md", before+line+"\n", memory.Version(before)), "an OpenAI API key", key)
	_, err = s.Patch(ctx, "facts/user.md", []memory.Patch{{OldText: "- Name: Jianjun", NewText: "- Name: Jianjun\n" + line}})
	wantSecretRefused(t, err, "an OpenAI API key", key)
	wantSecretRefused(t, s.Append(ctx, "episodes/2026-02.md", "## Set up the side project\n- Summary: key set\n- Key: "+key, ""), "an OpenAI API key", key)
	wantSecretRefused(t, s.Append(ctx, "procedures.md", "- When calling the API: use "+key, ""), "an OpenAI API key", key)
	gh := fakeGitHubToken(2)
	wantSecretRefused(t, s.SetPersona(ctx, "I am Ada. My token is "+gh+"\n", ""), "a GitHub token", gh)
	assert.Equal(t, before, readFile(t, dir, "facts/user.md"))

	// A mention is no secret.
	for _, l := range []string{
		"- The Tavily API key has a 1,000/day limit",
		"- password reset emails land in spam",
		"- uses 1Password",
		"- the Stripe webhook failed with 401",
		"- No Firebase API key in the build",
		"- my password manager is Bitwarden",
		"- token limit is 8k",
		"- config field api_key_env names the variable",
		"- OpenAI API key for the side project: in 1Password, item 'OpenAI'",
	} {
		require.NoError(t, s.Append(ctx, "facts/memory.md", l, ""), l)
	}
}

// TestSecretGuardOnlyNewText: a credential a person left in a file is not
// judged again by a change that does not add it: an append, a patch
// elsewhere, a whole-file write that keeps its line, a write that removes
// it. Check reports it.
func TestSecretGuardOnlyNewText(t *testing.T) {
	leavesBroken(t, "a person's credential left in facts/user.md, which Check reports")
	ctx := context.Background()
	s, dir := open(t, nil)
	key := backendtest.FakeKey(3)
	secretLine := "- Side project key: " + key
	writeFile(t, dir, "facts/user.md", "# User\n\n> Summary: Jianjun\n\n- Name: Jianjun\n"+secretLine+"\n- City: Hangzhou\n")
	require.NoError(t, s.Append(ctx, "facts/user.md", "- Language: prefers Chinese", ""))
	_, err := s.Patch(ctx, "facts/user.md", []memory.Patch{{OldText: "Hangzhou", NewText: "Hangzhou, Zhejiang"}})
	require.NoError(t, err)
	text := readFile(t, dir, "facts/user.md")
	require.NoError(t, s.Write(ctx, "facts/user.md", strings.Replace(text, "- Name: Jianjun\n", "", 1)+"- Team: platform\n"), "reordered and condensed, the credential's line kept")
	// The line moved, a line changed beside it: still not new.
	text = readFile(t, dir, "facts/user.md")
	moved := strings.Replace(text, secretLine+"\n", "", 1)
	moved = strings.Replace(moved, "- Team: platform\n", "- Team: platform (since 2024)\n"+secretLine+"\n", 1)
	require.NoError(t, s.Write(ctx, "facts/user.md", moved))

	findings, err := s.Check(ctx)
	require.NoError(t, err)
	var found []memory.Finding
	for _, f := range findings {
		if strings.Contains(f.Problem, "OpenAI API key") {
			found = append(found, f)
		}
	}
	require.NotEmpty(t, found)
	f := found[0]
	for _, x := range found {
		assert.NotContains(t, x.Problem+x.Fix, key)
		if x.Path == "facts/user.md" {
			f = x
		}
	}
	assert.Equal(t, "facts/user.md", f.Path)
	assert.Equal(t, strings.Count(moved[:strings.Index(moved, secretLine)], "\n")+1, f.Line)
	assert.Contains(t, f.Fix, "forget")

	// A change that removes it passes.
	require.NoError(t, s.Write(ctx, "facts/user.md", strings.Replace(moved, secretLine+"\n", "- Side project key: in 1Password\n", 1)))
}

// TestSecretGuardTools: the model's tools, and Claude's memory tool, give
// the refusal as a mistake it can fix: IsError, the kind named, what to
// keep instead, never the value.
func TestSecretGuardTools(t *testing.T) {
	s, dir := open(t, nil)
	key := backendtest.FakeKey(4)
	for _, c := range []struct{ name, args string }{
		{"memory_append", mustJSON(t, map[string]any{"path": "facts/user.md", "entry": "- OpenAI key: " + key})},
		{"memory_write", mustJSON(t, map[string]any{"path": "facts/memory.md", "content": "# Memory\n\n- key " + key + "\n"})},
	} {
		r := call(t, s, c.name, c.args)
		require.True(t, r.IsError, c.name)
		assert.Contains(t, r.Text, "an OpenAI API key", c.name)
		assert.Contains(t, r.Text, "where it is kept", c.name)
		assert.NotContains(t, r.Text, key, c.name)
	}
	require.True(t, call(t, s, "memory_append", mustJSON(t, map[string]any{"path": "facts/user.md", "entry": "- Name: Jianjun"})).IsError == false)
	r := call(t, s, "memory_patch", mustJSON(t, map[string]any{"path": "facts/user.md", "patches": []map[string]string{{"oldText": "- Name: Jianjun", "newText": "- Name: Jianjun, key " + key}}}))
	require.True(t, r.IsError, r.Text)
	assert.Contains(t, r.Text, "an OpenAI API key")

	res, err := s.NewSession().ClaudeMemory(context.Background(), json.RawMessage(mustJSON(t, map[string]any{"command": "create", "path": "/memories/facts/memory.md", "file_text": "# Memory\n\n- token " + fakeGitHubToken(5) + "\n"})))
	require.NoError(t, err)
	require.True(t, res.IsError, res.Text)
	assert.Contains(t, res.Text, "a GitHub token")
	assert.NotContains(t, res.Text, fakeGitHubToken(5))
	assert.NotContains(t, readFile(t, dir, "facts/user.md"), key)
}

// TestRestoreRefusesSecret: a version that holds a credential (a person's
// edit, recorded by the next change) is not restored, and the refusal says
// so.
func TestRestoreRefusesSecret(t *testing.T) {
	leavesBroken(t, "a person's credential kept in a version of the history, which Check reports")
	ctx := context.Background()
	s, dir := open(t, nil)
	require.NoError(t, s.Write(ctx, "facts/user.md", "# User\n\n> Summary: Jianjun\n\n- Name: Jianjun\n"))
	key := backendtest.FakeKey(6)
	writeFile(t, dir, "facts/user.md", "# User\n\n> Summary: Jianjun\n\n- Name: Jianjun\n- Key: "+key+"\n")
	withKey := memory.Version(readFile(t, dir, "facts/user.md"))
	require.NoError(t, s.Write(ctx, "facts/user.md", "# User\n\n> Summary: Jianjun\n\n- Name: Jianjun\n- Key: in 1Password\n"))
	err := s.Restore(ctx, "facts/user.md", withKey)
	wantSecretRefused(t, err, "an OpenAI API key", key)
	assert.Contains(t, hint(t, err), "nothing was restored")
	assert.Contains(t, hint(t, err), "version "+withKey)
	assert.NotContains(t, readFile(t, dir, "facts/user.md"), key)

	// Check finds it in the history: the version, the kind, what to do.
	findings, err := s.Check(ctx)
	require.NoError(t, err)
	var hist []memory.Finding
	for _, f := range findings {
		if strings.HasPrefix(f.Path, ".history/") && strings.Contains(f.Problem, "an OpenAI API key") {
			hist = append(hist, f)
		}
	}
	require.Len(t, hist, 1, "%+v", findings)
	assert.Contains(t, hist[0].Problem, withKey)
	assert.Contains(t, hist[0].Fix, "forget")
	assert.NotContains(t, hist[0].Problem+hist[0].Fix, key)
}

// TestCompactRefusesSecret: condensed text that holds a credential is not
// written: the month is skipped, as it was, with the reason.
func TestCompactRefusesSecret(t *testing.T) {
	ctx := context.Background()
	s, dir := open(t, &memory.Options{Now: feb26})
	require.NoError(t, s.Append(ctx, "episodes/2025-03.md", "## Set up the API\n- Date: 2025-03-02\n- Summary: account made\n- Outcome: key stored in 1Password", ""))
	require.NoError(t, s.Append(ctx, "episodes/2025-03.md", "## Tuned the prompts\n- Date: 2025-03-05\n- Summary: shorter prompts", ""))
	before := readFile(t, dir, "episodes/2025-03.md")
	key := backendtest.FakeKey(7)
	llm := memory.LLMFunc(func(context.Context, memory.Request) (memory.Response, error) {
		return memory.Response{Content: "## Set up the API\n- Date: 2025-03-02\n- Summary: account made, key " + key}, nil
	})
	res, err := s.Compact(ctx, llm, &memory.CompactOptions{Before: "2025-04", KeepLast: 1})
	require.NoError(t, err)
	require.Len(t, res.Skipped, 1, "%+v", res)
	assert.Contains(t, res.Skipped[0].Reason, "an OpenAI API key")
	assert.NotContains(t, res.Skipped[0].Reason, key)
	assert.Empty(t, res.Months)
	assert.Equal(t, before, readFile(t, dir, "episodes/2025-03.md"))
}

// TestSecretDetectorOption: a host's detector replaces the library's, and
// one that finds nothing switches the guard off.
func TestSecretDetectorOption(t *testing.T) {
	ctx := context.Background()
	banana := memory.SecretFunc(func(text string) []memory.Secret {
		if i := strings.Index(text, "banana"); i >= 0 {
			return []memory.Secret{{Kind: "a fruit code", Start: i, End: i + 6}, {Kind: "out of bounds", Start: -1, End: 1 << 30}}
		}
		return nil
	})
	s, _ := open(t, &memory.Options{Secrets: banana})
	wantSecretRefused(t, s.Append(ctx, "facts/user.md", "- Code: banana", ""), "a fruit code", "banana")
	key := backendtest.FakeKey(8)
	require.NoError(t, s.Append(ctx, "facts/memory.md", "- not found by this detector: "+key[:20], ""))

	leavesBroken(t, "the guard is off: a credential is kept on purpose")
	off, _ := open(t, &memory.Options{Secrets: memory.SecretFunc(func(string) []memory.Secret { return nil })})
	require.NoError(t, off.Append(ctx, "facts/user.md", "- Key: "+key, ""))
}

// TestSealKeepsPersonsSecret: a month's file sealed into a part moves its
// text, a person's credential included: the append is not refused.
func TestSealKeepsPersonsSecret(t *testing.T) {
	leavesBroken(t, "a person's credential left in a month's file, which Check reports")
	ctx := context.Background()
	s, dir := open(t, nil)
	key := backendtest.FakeKey(9)
	writeFile(t, dir, "episodes/2026-02.md", "# 2026-02 Episodes\n\n> Summary: setup\n\n## Setup\n- Date: 2026-02-01\n- Summary: setup\n- Key: "+key+"\n")
	filler := strings.Repeat("lorem ipsum dolor sit amet ", 40)
	for i := range 20 {
		require.NoError(t, s.Append(ctx, "episodes/2026-02.md", "## Task "+string(rune('a'+i))+"\n- Summary: work\n- Notes: "+filler, ""))
	}
	assert.Contains(t, readFile(t, dir, "episodes/2026-02.001.md"), key, "sealed as it was")
}

// TestReflectorSecretRefused: the reflector's proposal that holds a
// credential is refused, the model told why and what to keep instead, and
// nothing is written; its prompt says so before.
func TestReflectorSecretRefused(t *testing.T) {
	ctx := context.Background()
	s, _ := open(t, nil)
	key := backendtest.FakeKey(10)
	var reqs []memory.Request
	llm := memory.LLMFunc(func(_ context.Context, req memory.Request) (memory.Response, error) {
		reqs = append(reqs, req)
		if len(reqs) == 1 {
			args := mustJSON(t, map[string]any{"path": "facts/user.md", "entry": "- OpenAI key for the side project: " + key})
			return memory.Response{ToolCalls: []memory.ToolCall{{ID: "1", Name: "memory_append", Arguments: json.RawMessage(args)}}}, nil
		}
		return memory.Response{Content: "Nothing kept."}, nil
	})
	ref, err := memory.NewReflector(s, llm, nil).Reflect(ctx, memory.Task{
		Input: "here's my OpenAI key, " + key + ", set it up", Iterations: 3, Actions: 2, Result: "done",
	})
	require.NoError(t, err)
	assert.Empty(t, ref.Changed)
	require.Len(t, reqs, 2)
	assert.Contains(t, reqs[0].System, "where it is kept")
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	assert.Equal(t, "tool", last.Role)
	assert.Contains(t, last.Content, "an OpenAI API key")
	assert.Contains(t, last.Content, "where it is kept")
	assert.NotContains(t, last.Content, key)
	_, err = s.Read(ctx, "facts/user.md")
	require.ErrorIs(t, err, memory.ErrNotFound)
}

// TestCheckSecretInArchive: a credential in an archived original is
// reported with forget as the remedy, the original being read only.
func TestCheckSecretInArchive(t *testing.T) {
	leavesBroken(t, "a person's credential left in an archived original, which Check reports")
	ctx := context.Background()
	s, dir := open(t, nil)
	key := backendtest.FakeKey(11)
	writeFile(t, dir, "episodes/archive/2025-03.md", "# 2025-03 Episodes\n\n> Summary: setup\n\n## Setup\n- Date: 2025-03-01\n- Key: "+key+"\n")
	findings, err := s.Check(ctx)
	require.NoError(t, err)
	var got []memory.Finding
	for _, f := range findings {
		if strings.Contains(f.Problem, "an OpenAI API key") {
			got = append(got, f)
		}
	}
	require.Len(t, got, 1, "%+v", findings)
	assert.Equal(t, memory.Finding{Path: "episodes/archive/2025-03.md", Line: 7, Problem: got[0].Problem, Fix: got[0].Fix}, got[0])
	assert.Contains(t, got[0].Fix, "'mdmemory forget'")
	assert.NotContains(t, got[0].Fix, "edit")
}

// TestSecretGuardAfterLookAlikes: a password after many lines that only
// mention passwords is refused by the guard and reported by Check.
func TestSecretGuardAfterLookAlikes(t *testing.T) {
	ctx := context.Background()
	s, _ := open(t, nil)
	var b strings.Builder
	b.WriteString("# 2026-02\n\n> Summary: passwords moved\n\n## Moved the passwords to Bitwarden\n- Date: 2026-02-10\n- Summary: every service's password moved\n")
	for i := range 200 {
		b.WriteString("- Service " + string(rune('A'+i%26)) + ": password is managed by Bitwarden\n")
	}
	value := "Zq8#" + "kLm2Vw"
	b.WriteString("- NAS: password is " + value + "\n")
	wantSecretRefused(t, s.Write(ctx, "episodes/2026-02.md", b.String()), "a password", value)
	// Written with the guard off, Check finds it in the file.
	leavesBroken(t, "holds a password written with the guard off, for Check to find")
	s2, dir := open(t, &memory.Options{Secrets: memory.SecretFunc(func(string) []memory.Secret { return nil })})
	require.NoError(t, s2.Write(ctx, "episodes/2026-02.md", b.String()))
	require.NoError(t, s2.Close())
	s3, err := memory.Open(dir, &memory.Options{Now: feb26})
	require.NoError(t, err)
	defer s3.Close()
	findings, err := s3.Check(ctx)
	require.NoError(t, err)
	n := 0
	for _, f := range findings {
		if f.Path == "episodes/2026-02.md" && strings.Contains(f.Problem, "a password") {
			n++
			assert.Equal(t, strings.Count(b.String(), "\n"), f.Line)
		}
	}
	assert.Equal(t, 1, n, "%v", findings)
}

// TestSecretGuardAcrossLines: a credential whose name or header is in the
// file already, its value added by a later change, is refused: the lines
// added are judged with those around them.
func TestSecretGuardAcrossLines(t *testing.T) {
	ctx := context.Background()
	value := "Zq8#" + "kLm2Vw"
	const ep = "# 2026-02\n\n> Summary: setting up the server\n\n## Set up the server\n- Date: 2026-02-10\n- Summary: made the deploy key\n"
	s, dir := open(t, nil)
	require.NoError(t, s.Write(ctx, "episodes/2026-02.md", ep+"- NAS password:\n"))
	wantSecretRefused(t, s.Write(ctx, "episodes/2026-02.md", ep+"- NAS password:\n  "+value+"\n"), "a password", value)
	assert.NotContains(t, readFile(t, dir, "episodes/2026-02.md"), value)

	// A private key's header alone is refused; so is its body added below
	// a header kept with a placeholder.
	begin, end := "-----BEGIN OPENSSH PRIVATE"+" KEY-----\n", "-----END OPENSSH PRIVATE"+" KEY-----\n"
	wantSecretRefused(t, s.Write(ctx, "episodes/2026-02.md", ep+"- Key:\n"+begin), "a private key", begin)
	require.NoError(t, s.Write(ctx, "episodes/2026-02.md", ep+"- Key:\n"+begin+"...\n"+end))
	r := rand.New(rand.NewPCG(3, 4))
	const b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	body := ""
	for range 6 {
		line := make([]byte, 70)
		for i := range line {
			line[i] = b64[r.IntN(len(b64))]
		}
		body += string(line) + "\n"
	}
	wantSecretRefused(t, s.Write(ctx, "episodes/2026-02.md", ep+"- Key:\n"+begin+body+end), "a private key", body[:70])
	_, err := s.Patch(ctx, "episodes/2026-02.md", []memory.Patch{{OldText: "...\n", NewText: body}})
	wantSecretRefused(t, err, "a private key", body[:70])
	assert.NotContains(t, readFile(t, dir, "episodes/2026-02.md"), body[:70])

	// An unrelated line added next to a credential already there passes.
	leavesBroken(t, "holds a password written with the guard off, for Check to find")
	s2, dir2 := open(t, &memory.Options{Secrets: memory.SecretFunc(func(string) []memory.Secret { return nil })})
	require.NoError(t, s2.Write(ctx, "episodes/2026-02.md", ep+"- NAS password:\n"))
	require.NoError(t, s2.Write(ctx, "episodes/2026-02.md", ep+"- NAS password:\n  "+value+"\n"))
	require.NoError(t, s2.Close())
	s3, err := memory.Open(dir2, &memory.Options{Now: feb26})
	require.NoError(t, err)
	defer s3.Close()
	require.NoError(t, s3.Write(ctx, "episodes/2026-02.md", ep+"- NAS password:\n  "+value+"\n- Outcome: the NAS is up\n"))
	// Check finds the value in the file, and in the version that added it.
	findings, err := s3.Check(ctx)
	require.NoError(t, err)
	var inFile, inHistory int
	for _, f := range findings {
		if strings.Contains(f.Problem, "a password") {
			assert.NotContains(t, f.Problem+f.Fix, value)
			if f.Path == "episodes/2026-02.md" {
				inFile++
			} else {
				inHistory++
			}
		}
	}
	assert.Equal(t, 1, inFile, "%+v", findings)
	assert.Equal(t, 1, inHistory, "%+v", findings)
}
