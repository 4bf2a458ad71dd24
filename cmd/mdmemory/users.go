package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/mdmemory/memory"
)

// minTokenLen is the shortest bearer token mdmemory takes: a token a
// person could guess protects nothing.
const minTokenLen = 16

// tokenHint says how to make a token.
const tokenHint = "make one with: openssl rand -hex 32"

// users are the users of "mdmemory mcp --users FILE": each token's
// memory. Tokens are kept as their SHA-256 digests, and a request's token
// is looked up by its digest, so the lookup's time says nothing about the
// token. users is safe for concurrent use: it does not change once read,
// but for the stores it keeps open, which closeAll releases.
type users struct {
	byDigest map[[sha256.Size]byte]string // a token's digest: its user's memory
	worlds   map[string]string            // a user's memory: its shared world, or ""
	plain    bool                         // some token is written in clear, not as sha256:
	opts     memory.Options
	opener   *opener

	mu   sync.Mutex
	open map[*memory.Store]func() // the stores opened and not released, with their release
}

// maxUsersFile bounds what is read of a users file: some 40,000 lines.
const maxUsersFile = 4 << 20

// readUsers reads the users file at path:
//
//	# comments and blank lines are ignored
//	TOKEN          MEMORY [WORLD]
//	sha256:HEX     MEMORY [WORLD]
//
// one line per token, its fields separated by spaces or tabs. TOKEN is the
// bearer token itself (at least 16 characters), or "sha256:" and the
// SHA-256 of the token in hex, so that the file need not hold the token.
// MEMORY is the user's memory, a directory (created on first use) or
// s3://BUCKET/PREFIX; WORLD is the shared world of its topics, a directory
// or s3://BUCKET/PREFIX, and defaultWorld when the line has none. A
// relative directory is taken from the users file's folder. A user is its
// memory: two tokens for one memory are one user, with one world.
func readUsers(path, defaultWorld string, opts memory.Options, getenv func(string) string) (*users, error) {
	b, err := readSmall(path, maxUsersFile)
	if err != nil {
		return nil, err
	}
	u, err := parseUsers(bytes.NewReader(b), filepath.Dir(path), defaultWorld)
	if err != nil {
		return nil, fmt.Errorf("%s:%w", path, err)
	}
	u.opts, u.opener = opts, &opener{getenv: getenv}
	return u, nil
}

// parseUsers parses a users file whose relative directories are in base.
// Its errors start with the line number and ": ".
func parseUsers(r io.Reader, base, defaultWorld string) (*users, error) {
	u := &users{byDigest: make(map[[sha256.Size]byte]string), worlds: make(map[string]string), open: make(map[*memory.Store]func())}
	worldLine := make(map[string]int)
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		// A comment may end a line too.
		if i := slices.IndexFunc(f, func(s string) bool { return strings.HasPrefix(s, "#") }); i >= 0 {
			f = f[:i]
		}
		if len(f) < 2 || len(f) > 3 {
			return nil, fmt.Errorf("%d: want TOKEN MEMORY [WORLD], found %d fields", n, len(f))
		}
		digest, err := tokenDigest(f[0])
		if err != nil {
			return nil, fmt.Errorf("%d: %w", n, err)
		}
		u.plain = u.plain || !strings.HasPrefix(f[0], "sha256:")
		if _, dup := u.byDigest[digest]; dup {
			return nil, fmt.Errorf("%d: a token given twice", n)
		}
		mem := location(base, f[1])
		world := defaultWorld
		if len(f) == 3 {
			world = location(base, f[2])
		}
		if prev, ok := u.worlds[mem]; ok && prev != world {
			return nil, fmt.Errorf("%d: %s has another world on line %d", n, f[1], worldLine[mem])
		}
		u.byDigest[digest] = mem
		u.worlds[mem] = world
		worldLine[mem] = n
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(u.byDigest) == 0 {
		return nil, fmt.Errorf("%d: no user: write one line per user, TOKEN MEMORY [WORLD]", n)
	}
	return u, nil
}

// tokenDigest returns the SHA-256 of the token a users file's first field
// gives: the token, or "sha256:" and its digest in hex.
func tokenDigest(field string) ([sha256.Size]byte, error) {
	var d [sha256.Size]byte
	if h, ok := strings.CutPrefix(field, "sha256:"); ok {
		b, err := hex.DecodeString(h)
		if err != nil || len(b) != sha256.Size {
			return d, errors.New("sha256: takes the 64 hex digits of a token's SHA-256 (printf %s TOKEN | sha256sum)")
		}
		copy(d[:], b)
		return d, nil
	}
	if len(field) < minTokenLen {
		return d, fmt.Errorf("a token of %d characters: a token has at least %d (%s)", len(field), minTokenLen, tokenHint)
	}
	return sha256.Sum256([]byte(field)), nil
}

// location is where, a memory or a world of a users file: s3://... as it
// is, a relative directory taken from base.
func location(base, where string) string {
	if strings.HasPrefix(where, "s3://") {
		return where
	}
	if filepath.IsAbs(where) {
		return filepath.Clean(where) // /srv/a/ and /srv/a are one memory
	}
	return filepath.Join(base, where)
}

// User returns the memory of the user whose token is token.
func (u *users) User(token string) (string, bool) {
	name, ok := u.byDigest[sha256.Sum256([]byte(token))]
	return name, ok
}

// Open opens the memory of the user name, creating its directory when it
// has none, as mcp does. The store is released by the func returned, or
// by closeAll, whichever comes first.
func (u *users) Open(ctx context.Context, name string) (*memory.Store, func(), error) {
	s, close, err := openStore(ctx, name, u.worlds[name], u.opts, true, u.opener)
	if err != nil {
		return nil, nil, err
	}
	release := sync.OnceFunc(func() {
		u.mu.Lock()
		delete(u.open, s)
		u.mu.Unlock()
		close()
	})
	u.mu.Lock()
	u.open[s] = release
	u.mu.Unlock()
	return s, release, nil
}

// closeAll releases every store Open opened and nothing released yet, as
// a server that stops does once its requests are done.
func (u *users) closeAll() {
	u.mu.Lock()
	all := make([]func(), 0, len(u.open))
	for _, release := range u.open {
		all = append(all, release)
	}
	u.mu.Unlock()
	for _, release := range all {
		release()
	}
}

// opened is the number of stores open.
func (u *users) opened() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.open)
}

// roots are the places the users' memories and worlds are kept, each
// once, for a probe of the backend: an S3 bucket (s3://BUCKET), or the
// folder that holds a user's directory, which Open creates.
func (u *users) roots() []string {
	seen := make(map[string]bool)
	var roots []string
	for mem, world := range u.worlds {
		for _, where := range []string{mem, world} {
			root := rootOf(where, true)
			if root != "" && !seen[root] {
				seen[root] = true
				roots = append(roots, root)
			}
		}
	}
	slices.Sort(roots)
	return roots
}

// logKey is the key of the user ids of the access log (userID): the
// SHA-256 of the token digests of the file, in order. Every process that
// reads the same users file has it without a setting of its own; who does
// not have the file (whose digests are as secret as a password's hash)
// cannot tell a user from a guess of its memory's name. A change to the
// users' tokens changes every id.
func (u *users) logKey() []byte {
	digests := make([][sha256.Size]byte, 0, len(u.byDigest))
	for d := range u.byDigest {
		digests = append(digests, d)
	}
	slices.SortFunc(digests, func(a, b [sha256.Size]byte) int { return bytes.Compare(a[:], b[:]) })
	h := sha256.New()
	h.Write([]byte("mdmemory access log user id\x00"))
	for _, d := range digests {
		h.Write(d[:])
	}
	return h.Sum(nil)
}

// count is the number of users.
func (u *users) count() int { return len(u.worlds) }
