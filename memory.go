package memory

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/mdmemory/memory/internal/markdown"
	"github.com/mdmemory/memory/internal/paths"
)

// Defaults for the zero values of [Options], whose docs give them too.
const (
	defaultFactsBudget = 15360 // bytes over all fact files
	defaultIndexBudget = 2000  // characters of Session.IndexMessage
	defaultLockTimeout = 10 * time.Second
	defaultMaxSessions = 1000 // conversations Store.Session keeps
)

// maxFileSize bounds any one memory file the library writes: memory files
// are read whole into prompts, and a model asking for more is mistaken.
const maxFileSize = 1 << 20

// readLimit is the most of one memory file the library reads: the write
// limit. A file a person made larger is read as its first readLimit bytes
// (whole lines), shown with a note that says so, searched by them, listed
// with its real size, reported by Check, and changed by no tool: a person
// splits or condenses it. No read of a memory file, on any backend, takes
// more.
const readLimit = maxFileSize

// headSize is how much of a file List reads to find its title and summary,
// and headMax how much it reads when the summary is not found in headSize.
const (
	headSize = 1024
	headMax  = 64 << 10
)

// Options configure a [Store]. The zero value, like a nil *Options, gives
// the defaults. Open copies the struct: changing it afterwards has no effect.
type Options struct {
	// FactFiles is the closed set of fact files, in the order they are
	// listed and shown to the reflector. nil means user.md and memory.md
	// with the purposes the design gives them.
	FactFiles []FactFile

	// FactsBudget is the limit, in bytes, on the summed size of the fact
	// files. 0 means 15,360 bytes.
	FactsBudget int

	// ProceduresBudget is the limit, in bytes, on the size of
	// procedures.md, the rules learned from experience. It is a budget of
	// its own, not part of FactsBudget: procedures are not loaded into
	// every prompt but searched, and loaded whole only when a host wants
	// them. 0 means 4,096 bytes, about 40 rules.
	ProceduresBudget int

	// Now is the clock used for entry dates and month files. nil means
	// time.Now.
	Now func() time.Time

	// IndexBudget is the size, in characters, [Session.IndexMessage] aims
	// for. 0 means 2,000 characters.
	IndexBudget int

	// FileMode is the mode of the files Open's directory creates, as
	// [OpenDir] takes it: 0 means 0600 (folders 0700), the owner's alone;
	// 0660 (folders 0770) lets a group share the memory. Files and folders that exist keep their mode, but for
	// the lock file, ".lock", which gets this one. It has no effect on a
	// store opened with OpenBackend.
	FileMode fs.FileMode

	// LockTimeout bounds how long a change waits for another process that
	// holds the lock it needs (the directory's, or on S3 the facts' lease).
	// 0 means 10 seconds.
	LockTimeout time.Duration

	// MaxSessions bounds the conversations [Store.Session] keeps by id: when
	// a new one would make more, the one used least recently is forgotten.
	// Each costs a few hundred bytes and a line per file it has seen.
	// 0 means 1,000.
	MaxSessions int

	// IndexIdle, when positive, releases the search index after that long
	// without a search, as [Store.ReleaseIndex] does, so that a server
	// holding many stores keeps indexes for the busy ones only. 0 keeps
	// the index until Close.
	IndexIdle time.Duration

	// World, when not nil, is a backend this store shares with other
	// agents' stores, for the world facts they all know: the files
	// world/<topic>.md in it, which each agent reads, searches and changes
	// like its own fact files, while its facts/, episodes/ and other files
	// stay its own (see [Store]). It is typically a [Dir] all the agents
	// open, or an s3store.Backend for a prefix they share. The store does
	// not close it. nil gives a store with no world/.
	World Backend

	// WorldBudget is the limit, in bytes, on the summed size of the world
	// topics, which all agents sharing World fill together; each store
	// checks it with its own value, so give them the same. 0 means 15,360
	// bytes, as for the facts.
	WorldBudget int

	// Embedder, when not nil, adds semantic search to Store.Search and
	// memory_search: the keyword ranking is fused with one by the
	// similarity of vectors the Embedder gives (see [Embedder] and
	// [Store.Search]). nil searches by keywords alone.
	Embedder Embedder
}

// FactFile is one file of the closed set under facts/.
type FactFile struct {
	// Name is the file's name inside facts/, such as "user.md": lower-case
	// letters, digits, '-' and '_', ending in ".md".
	Name string
	// Purpose says what belongs in the file; the reflector's prompt shows it
	// to the model.
	Purpose string
}

// defaultFactFiles is the seed's closed set; a function so that no mutable
// default is exported.
func defaultFactFiles() []FactFile {
	return []FactFile{
		{Name: "user.md", Purpose: "about the person: identity, preferences, relationships, important dates, recurring habits"},
		{Name: "memory.md", Purpose: "about experience: insights from past tasks, patterns learned, non-obvious know-how"},
	}
}

// FileInfo describes one memory file, as memory_list shows it. A month is
// one FileInfo whatever parts it has: Path is its file's, episodes/YYYY-MM.md
// (even when only its parts exist now), Summary that of its newest file,
// and Size all its files' bytes together.
type FileInfo struct {
	Path    string `json:"path"`            // relative and slash-separated: "facts/user.md"
	Summary string `json:"summary"`         // the file's "> Summary:" line, "" when it has none
	Size    int64  `json:"size"`            // bytes on disk
	Error   string `json:"error,omitempty"` // why the file (or, for "episodes/" or "world/", the folder) cannot be read; "" when it can

	// Parts counts a month's full parts, episodes/YYYY-MM.001.md and on,
	// which hold its older entries; 0 for a month in one file.
	Parts int `json:"parts,omitempty"`

	// Compacted reports a month that Store.Compact condensed: its original
	// entries are under episodes/archive/, for memory_read and search.
	Compacted bool `json:"compacted,omitempty"`
}

// A Store is a memory: the fact files under facts/, the month files under
// episodes/, and procedures.md and the person's persona.md, kept by a
// [Backend], a local directory by default; and, when Options.World is set,
// the world facts it shares with other agents, world/<topic>.md, kept by
// that backend. Every file is read from its backend when it is needed, so
// a person's edit in an editor, or another agent's change, is seen by the
// very next call.
//
// A Store is safe for concurrent use by multiple goroutines, and several
// Stores, in one process or several, may share a backend. Each change is one
// loop: read the file with its version, check, edit, and write only if the
// file is still at that version, reading again when another writer won; so
// none is lost, and readers never see a partly written file.
type Store struct {
	b     Backend
	owned io.Closer // the backend Open made, closed by Close
	opts  Options

	turn chan struct{} // a one-slot semaphore serialising this Store's changes; the backend's lock excludes others

	search index // the keyword index, brought up to date before each search

	headsMu sync.Mutex
	heads   map[string]cachedHead // what List read of each file, by path; released with the index
	facts   factCache             // the fact guard's parsed versions of the fact files (factguard.go)

	toolsOnce sync.Once
	tools     []Tool   // the tool definitions, made on first use (toolSet); a Session binds them
	sessions  sessions // the conversations named by the host

	life   sync.RWMutex // held for reading by each operation, for writing by Close
	closed bool

	idleHook func() // tests: called when IndexIdle released the index
}

// Open opens the memory directory dir on a [Dir] backend, creating it and
// its facts/ and episodes/ folders if needed, and removes temporary files a
// crash may have left behind. A nil opts gives the defaults. Open returns an
// error wrapping [ErrInvalidPath] when a FactFile name is not a valid file
// name, and a plain error for other invalid options or when the directory
// cannot be created or opened. Close closes the directory.
func Open(dir string, opts *Options) (*Store, error) {
	o, err := fillOptions(opts)
	if err != nil {
		return nil, err
	}
	d, err := openDir(dir, o.FileMode)
	if err != nil {
		return nil, hostErr("open", "", err)
	}
	for _, sub := range []string{factsDir, episodesDir} {
		if err := d.mkdirs(sub); err != nil {
			d.Close()
			return nil, hostErr("open", sub, err)
		}
	}
	s, err := newStore(d, o)
	if err != nil {
		d.Close()
		return nil, err
	}
	s.owned = d
	return s, nil
}

// OpenBackend opens a store on b, such as an s3store.Backend for a key
// prefix in a bucket. A nil opts gives the defaults; the errors for
// invalid options are Open's. The store does not close b: b belongs to
// the caller, and may serve other stores.
func OpenBackend(b Backend, opts *Options) (*Store, error) {
	if b == nil {
		return nil, errors.New("memory: open: the Backend is nil")
	}
	o, err := fillOptions(opts)
	if err != nil {
		return nil, err
	}
	return newStore(b, o)
}

func fillOptions(opts *Options) (Options, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	return o, o.fill()
}

// newStore makes the store, after it removed the temporary files a crash
// left in the folders it writes, on each backend that is a [Dir].
func newStore(b Backend, o Options) (*Store, error) {
	if err := sweep(b, o.LockTimeout, ".", factsDir, episodesDir, episodesDir+"/"+archiveDir, cacheDir); err != nil {
		return nil, err
	}
	if o.World != nil {
		if err := sweep(o.World, o.LockTimeout, worldDir); err != nil {
			return nil, err
		}
		b = split{own: b, world: o.World}
	}
	return &Store{b: b, opts: o, turn: make(chan struct{}, 1)}, nil
}

// sweep removes the temporary files a crash left in folders of b, when b
// is a Dir: other backends write atomically, and leave none.
func sweep(b Backend, timeout time.Duration, folders ...string) error {
	d, ok := b.(*Dir)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	err := d.removeTemps(ctx, folders)
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("%w (waited %v)", ErrLocked, timeout)
	}
	if err != nil {
		return hostErr("open", "", err)
	}
	return nil
}

// fill checks the options and applies the defaults.
func (o *Options) fill() error {
	if o.FactFiles == nil {
		o.FactFiles = defaultFactFiles()
	}
	o.FactFiles = slices.Clone(o.FactFiles)
	if len(o.FactFiles) == 0 {
		return errors.New("memory: open: Options.FactFiles is empty; leave it nil for the defaults")
	}
	seen := map[string]bool{}
	for _, f := range o.FactFiles {
		if !paths.ValidFactName(f.Name) {
			return fmt.Errorf("memory: open: fact file %q: %w: use lower-case letters, digits, '-' and '_', ending in .md", f.Name, ErrInvalidPath)
		}
		if seen[f.Name] {
			return fmt.Errorf("memory: open: fact file %q listed twice: %w", f.Name, ErrInvalidPath)
		}
		seen[f.Name] = true
	}
	if o.FactsBudget < 0 || o.ProceduresBudget < 0 || o.WorldBudget < 0 || o.IndexBudget < 0 || o.LockTimeout < 0 || o.MaxSessions < 0 || o.IndexIdle < 0 {
		return errors.New("memory: open: FactsBudget, ProceduresBudget, WorldBudget, IndexBudget, LockTimeout, MaxSessions and IndexIdle may not be negative")
	}
	if _, err := checkMode(o.FileMode); err != nil {
		return fmt.Errorf("memory: open: Options.FileMode: %w", err)
	}
	if o.WorldBudget == 0 {
		o.WorldBudget = defaultWorldBudget
	}
	if o.ProceduresBudget == 0 {
		o.ProceduresBudget = defaultProceduresBudget
	}
	if o.MaxSessions == 0 {
		o.MaxSessions = defaultMaxSessions
	}
	if o.LockTimeout == 0 {
		o.LockTimeout = defaultLockTimeout
	}
	if o.FactsBudget == 0 {
		o.FactsBudget = defaultFactsBudget
	}
	if o.IndexBudget == 0 {
		o.IndexBudget = defaultIndexBudget
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return nil
}

// Close releases the store, and the directory when Open opened it. Calls
// after the first return nil; other methods then return [ErrClosed]. Close
// waits for operations in progress.
func (s *Store) Close() error {
	s.life.Lock()
	defer s.life.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.ReleaseIndex()
	if s.owned != nil {
		return s.owned.Close()
	}
	return nil
}

// begin starts an operation: it fails when ctx is done or the store is
// closed, and otherwise keeps Close waiting until the returned func runs.
func (s *Store) begin(ctx context.Context, op, p string) (end func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, hostErr(op, p, err)
	}
	s.life.RLock()
	if s.closed {
		s.life.RUnlock()
		return nil, hostErr(op, p, ErrClosed)
	}
	return s.life.RUnlock, nil
}

// start begins an operation on the file at path p: see begin and resolve.
func (s *Store) start(ctx context.Context, op, p string) (target, func(), error) {
	end, err := s.begin(ctx, op, p)
	if err != nil {
		return target{}, nil, err
	}
	t, err := s.resolve(op, p)
	if err != nil {
		end()
		return target{}, nil, err
	}
	return t, end, nil
}

func (s *Store) now() time.Time { return s.opts.Now() }

// List returns the memory files: persona.md when it exists, the fact files
// that exist, in the configured order, the shared world topics (when
// Options.World is set) by name, procedures.md when it exists, then the
// months, newest first, one entry a month
// whatever parts it has (its size is theirs together, its summary that of
// its newest file). Only the head of each file is read, for its summary.
// Files in the root that are not memory files, and the originals Compact
// archived, are not listed. An empty store gives an empty, non-nil slice.
//
// A file that cannot be read (its permissions, a person's mistake) is
// listed with FileInfo.Error saying so, and the others as usual; when
// episodes/ or world/ itself cannot be listed, an entry with the path
// "episodes/" or "world/" says why. A done context, a closed store, or a
// backend that cannot list or read for another reason (the network, the
// server) fail List.
//
// List lists the backend once (on S3 one ListObjectsV2 a thousand files)
// and reads the heads of the files it found in parallel, at most
// listWorkers at a time; a file whose tag (its ETag on S3) is the one it
// had at the last List is not read again: its summary is remembered, until
// the index is released (ReleaseIndex, Options.IndexIdle). When the whole
// cannot be listed because of a person's mistake, each folder is listed on
// its own.
func (s *Store) List(ctx context.Context) ([]FileInfo, error) {
	const op = "list"
	end, err := s.begin(ctx, op, "")
	if err != nil {
		return nil, err
	}
	defer end()

	all, err := s.b.List(ctx, "")
	switch {
	case err == nil:
		return s.listAll(ctx, all)
	case classify(err) != faultPerson:
		return nil, hostErr(op, "", err)
	}
	return s.listEach(ctx)
}

// listEach is List, one folder at a time.
func (s *Store) listEach(ctx context.Context) ([]FileInfo, error) {
	const op = "list"
	files := []FileInfo{}
	add := func(p string, info FileInfo, ok bool, err error) error {
		info, ok, err = listed(p, info, ok, err)
		if ok {
			files = append(files, info)
		}
		return err
	}
	root := func(p string) error {
		info, ok, err := s.head(ctx, p)
		if err := add(p, info, ok, err); err != nil {
			return hostErr(op, p, err)
		}
		return nil
	}
	if err := root(personaFile); err != nil {
		return nil, err
	}
	// The fact files listed are read; when facts/ cannot be listed, each
	// is tried.
	facts, factsErr := s.b.List(ctx, factsDir)
	if factsErr != nil && classify(factsErr) != faultPerson {
		return nil, hostErr(op, factsDir, factsErr)
	}
	for _, f := range s.opts.FactFiles {
		p := factPath(f.Name)
		if factsErr == nil && !slices.ContainsFunc(facts, func(e Entry) bool { return e.Name == p }) {
			continue
		}
		info, ok, err := s.head(ctx, p)
		if err := add(p, info, ok, err); err != nil {
			return nil, hostErr(op, p, err)
		}
	}
	topics, err := s.topics(ctx, op)
	if err != nil {
		return nil, err
	}
	files = append(files, topics...)
	if err := root(proceduresFile); err != nil {
		return nil, err
	}
	months, listErr := s.monthsIn(ctx, episodesDir)
	for _, m := range months {
		info, ok, err := s.monthInfo(ctx, m)
		if err := add(monthPath(m.month), info, ok, err); err != nil {
			return nil, hostErr(op, monthPath(m.month), err)
		}
	}
	if listErr != nil {
		if classify(listErr) != faultPerson {
			return nil, hostErr(op, episodesDir, listErr)
		}
		files = append(files, FileInfo{Path: episodesDir + "/", Error: unreadable(episodesDir+"/", listErr)})
	}
	return files, nil
}

// listed is what List shows of the file at p, given what head (or
// monthInfo) said of it: info when it exists (ok), the reason when a person
// made it unreadable, nothing when it does not exist; an error for any
// other failure (the network, the server, a done context).
func listed(p string, info FileInfo, ok bool, err error) (FileInfo, bool, error) {
	switch {
	case err != nil && !classify(err).gone():
		return FileInfo{}, false, err
	case err != nil:
		return FileInfo{Path: p, Error: unreadable(p, err)}, true, nil
	}
	return info, ok, nil
}

// monthInfo describes a month as List shows it: the summary of its newest
// file, the size of all its files.
func (s *Store) monthInfo(ctx context.Context, m monthFiles) (info FileInfo, ok bool, err error) {
	paths := m.paths()
	for i := len(paths) - 1; i >= 0 && !ok; i-- {
		if info, ok, err = s.head(ctx, paths[i]); err != nil {
			return FileInfo{}, false, err
		}
	}
	if !ok {
		return FileInfo{}, false, nil
	}
	info.Path, info.Size, info.Parts = monthPath(m.month), m.size, len(m.parts)
	return info, true, nil
}

// unreadable says why the file or folder (ending in "/") at p could not be
// read, for FileInfo. It names no host path.
func unreadable(p string, err error) string {
	var pe *fs.PathError
	switch {
	case errors.Is(err, syscall.ENOTDIR) && strings.HasSuffix(p, "/"):
		return "cannot be read: it is a file, not a folder; a person must fix the memory directory"
	case errors.Is(err, syscall.ENOTDIR):
		return "cannot be read: its folder is a file; a person must fix the memory directory"
	case errors.As(err, &pe):
		return "cannot be read (" + pe.Err.Error() + "); a person must fix it"
	default:
		return "cannot be read; a person must fix it"
	}
}

// folders are the folders of the store: facts/, episodes/ and, when it
// shares world facts, world/.
func (s *Store) folders() []string {
	if s.opts.World != nil {
		return []string{factsDir, worldDir, episodesDir}
	}
	return []string{factsDir, episodesDir}
}

// files lists the memory files there are, with their sizes and tags, in
// one listing of the backend: the configured fact files that exist,
// procedures.md, the world topics, then every file of the months and the
// originals in the archive. When the whole cannot be listed because of a
// person's mistake (a folder made unreadable, a file where a folder should
// be), each folder is listed on its own, and files returns what it could
// list and why not. Any other failure (the network, the server) is an
// error: a search must not answer from a listing it did not get.
func (s *Store) files(ctx context.Context) ([]Entry, error) {
	all, err := s.b.List(ctx, "")
	if classify(err) == faultPerson {
		all, err = nil, nil
		for _, dir := range s.folders() {
			entries, lerr := s.b.List(ctx, dir)
			if lerr != nil && classify(lerr) != faultPerson {
				return nil, lerr
			}
			all = append(all, entries...)
			if lerr != nil {
				err = lerr
			}
		}
		// procedures.md, at the root, with no tag: the search reads it.
		switch c, rerr := s.b.Read(ctx, proceduresFile, 0); {
		case rerr == nil:
			all = append(all, Entry{Name: proceduresFile, Size: c.Size})
		case !errors.Is(rerr, fs.ErrNotExist) && !classify(rerr).gone():
			return nil, rerr
		}
	} else if err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(all))
	g := s.grammar()
	for _, e := range all {
		if g.Listed(e.Name) {
			out = append(out, e)
		}
	}
	return out, err
}

// head reads the start of a file for its summary. ok is false when the file
// does not exist.
func (s *Store) head(ctx context.Context, p string) (info FileInfo, ok bool, err error) {
	c, err := s.b.Read(ctx, p, headSize)
	if errors.Is(err, fs.ErrNotExist) {
		return FileInfo{}, false, nil
	}
	if err != nil {
		return FileInfo{}, false, err
	}
	buf := c.Data
	cut := markdown.HeadLen(buf)
	d := markdown.Parse(buf[:cut])
	if (!d.Summary.OK || d.Summary.End == cut) && c.Size > int64(len(buf)) {
		// No summary in the first two blocks' lines, or one that may go on
		// past them: parse the start of the file as it is (an odd head, such
		// as link definitions before the title), up to headMax bytes.
		if c, err = s.b.Read(ctx, p, headMax); err != nil {
			return FileInfo{}, false, err
		}
		d = markdown.Parse(c.Data)
	} else if !d.Summary.OK || d.Summary.End == cut {
		d = markdown.Parse(buf)
	}
	return FileInfo{Path: p, Summary: printable(d.Summary.Text), Size: c.Size, Compacted: strings.HasPrefix(p, episodesDir+"/") && compactedMark(d)}, true, nil
}

// Read returns the content of the file at path. It returns an error wrapping
// [ErrInvalidPath] for a path outside the grammar and [ErrNotFound] for a
// file that does not exist. A file a person made larger than 1 MiB (the
// limit for one memory file) is not read whole: Read returns its first
// lines, up to 1 MiB, and a last line saying that it is cut, how large the
// file is and what to do; the Store's changes refuse such a file.
func (s *Store) Read(ctx context.Context, path string) (string, error) {
	t, end, err := s.start(ctx, "read", path)
	if err != nil {
		return "", err
	}
	defer end()
	c, err := s.readContent(ctx, "read", t)
	if err != nil {
		return "", err
	}
	if c.Data == nil {
		if parts := s.olderParts(ctx, t.path); parts != "" {
			return "", modelErr("read", t.path, ErrNotFound, t.path+" does not exist now", "; "+parts)
		}
		return "", modelErr("read", t.path, ErrNotFound, t.path+" does not exist yet", "; call memory_list to see the files there are")
	}
	if cutShort(c) {
		head := c.Data
		if i := bytes.LastIndexByte(head, '\n'); i >= 0 {
			head = head[:i+1]
		}
		return fmt.Sprintf("%s\n(%s is %s bytes, more than the library reads of one memory file (%s bytes): only its first %s are shown, and no tool can change it until a person splits or condenses it)\n",
			head, t.path, thousands64(c.Size), thousands(readLimit), thousands(len(head))), nil
	}
	return string(c.Data), nil
}

// cutShort reports whether c is only the start of its file.
func cutShort(c Content) bool { return c.Size > int64(len(c.Data)) }

// readContent reads a target, at most readLimit bytes of it. A missing
// file gives Data nil and no error.
func (s *Store) readContent(ctx context.Context, op string, t target) (Content, error) {
	c, err := s.b.Read(ctx, t.path, readLimit)
	switch {
	case err == nil:
		if c.Data == nil {
			c.Data = []byte{}
		}
		return c, nil
	case errors.Is(err, fs.ErrNotExist):
		return Content{}, nil
	case errors.Is(err, errLeaves):
		err := modelErr(op, t.path, ErrInvalidPath, t.path+" is a symbolic link that leads out of its folder", "; it cannot be used")
		err.(*Error).link = true
		return Content{}, err
	case errors.Is(err, errOutside):
		err := modelErr(op, t.path, ErrInvalidPath, t.path+" is a symbolic link that leads outside the memory directory", "; it cannot be used")
		err.(*Error).link = true
		return Content{}, err
	default:
		return Content{}, hostErr(op, t.path, err)
	}
}

// readFile reads a target whole, with its version, to change it. A missing
// file gives nil and no error; a file over readLimit (a person's) is a
// model error wrapping [ErrInvalidContent]: what is past its start would be
// lost.
func (s *Store) readFile(ctx context.Context, op string, t target) ([]byte, string, error) {
	c, err := s.readContent(ctx, op, t)
	switch {
	case err != nil:
		return nil, "", err
	case cutShort(c):
		return nil, "", modelErr(op, t.path, ErrInvalidContent, fmt.Sprintf("%s is %s bytes, more than the library reads of one memory file (%s bytes; a person made it so): only its start can be read, and no tool may change it", t.path, thousands64(c.Size), thousands(readLimit)),
			"; a person must split or condense it. Nothing was changed")
	}
	return c.Data, c.Version, nil
}

// Write creates or replaces the file at path with content. A content without
// a "# " title gets the file's title; one without a "> Summary:" line gets a
// derived one (see [Store.Append] for the rule); a summary line already in
// content is kept as written. The file always ends with a newline.
//
// Write returns an error wrapping [ErrInvalidPath] for a path outside the
// grammar, persona.md (the person's, changed by hand only), an archived
// original or a part that does not exist (only [Store.Append] makes
// parts); [ErrInvalidContent] for a line it adds to procedures.md that is
// not "- When <situation>: <action>", or for content that is not
// UTF-8, holds a NUL byte or a carriage return that does not end a line,
// nests blockquotes or lists more than 32 deep, ends inside an open block
// (a code fence, an HTML comment or block), has a summary line with a
// control character, or is over 1 MiB, or replaces a file a person made
// larger than 1 MiB, of which only the start is read;
// [ErrBudgetExceeded] when a fact file would take the fact files over the
// budget, or procedures.md would grow over Options.ProceduresBudget; and,
// for a fact file, [ErrTemporaryFact] or [ErrDuplicateFact] when a line the
// content adds (one the file did not hold) is worded as temporary, repeats
// a fact or restates a key of the file. [Store.Patch] and [Store.Append]
// hold procedures.md to the same rules.
func (s *Store) Write(ctx context.Context, path, content string) error {
	_, err := s.write(ctx, path, content, nil)
	return err
}

// Version returns the version of a file's content, as [Store.WriteIf] and
// the tools' version tokens check it: a short hash of the content alone.
// A file that does not exist has no content; WriteIf and the tools take ""
// as its version.
func Version(content string) string {
	sum := sha256.Sum256([]byte(content))
	return hex.EncodeToString(sum[:versionLen])
}

// versionLen is how many bytes of a content's SHA-256 its version keeps.
const versionLen = 12

func version(b []byte) string {
	if b == nil {
		return ""
	}
	return Version(string(b))
}

// WriteIf is [Store.Write] for a caller that read the file first: it
// writes content only when the file is still as the caller read it, that is
// when want equals Version(the text the caller read), or, when want is "",
// when the file does not exist. Otherwise it changes nothing and returns an
// error wrapping [ErrConflict], so an edit made in the meantime is not lost.
func (s *Store) WriteIf(ctx context.Context, path, content, want string) error {
	_, err := s.write(ctx, path, content, versionIs(want))
	return err
}

// versionIs is the guard of a change made only if the file is at version
// want: "" when it does not exist.
func versionIs(want string) guard {
	return func(op string, t target, old []byte) error {
		if v := version(old); v != want {
			return modelErr(op, t.path, ErrConflict, fmt.Sprintf("%s is at version %q, not %q: it changed since it was read", t.path, v, want), "; nothing was written")
		}
		return nil
	}
}

func (s *Store) write(ctx context.Context, p, content string, check guard) ([]byte, error) {
	const op = "write"
	t, end, err := s.start(ctx, op, p)
	if err != nil {
		return nil, err
	}
	defer end()
	if err := checkText(op, t.path, "content", content); err != nil {
		return nil, err
	}
	data := []byte(content)
	if len(data) > 0 && data[len(data)-1] != '\n' {
		data = append(data, '\n')
	}
	if err := checkClosed(op, t.path, "content", data); err != nil {
		return nil, err
	}
	d := markdown.Parse(data)
	if d.Summary.OK && strings.ContainsFunc(d.Summary.Text, unprintable) {
		return nil, modelErr(op, t.path, ErrInvalidContent, "the content's summary line holds a control character or a line or paragraph separator", "; make it one line of plain text")
	}
	if !d.Title.OK || !d.Summary.OK {
		summary := d.Summary.Text
		if !d.Summary.OK {
			summary = s.deriveSummary(t, d)
		}
		data = d.SetHead(s.title(t), summary)
	}
	return s.update(ctx, op, t, check, func(ctx context.Context, _ Held, old []byte) ([]byte, error) {
		if old == nil && t.part > 0 {
			return nil, modelErr(op, t.path, ErrInvalidPath, t.path+" does not exist, and only a full month's file becomes a part", "; write to "+monthPath(t.month)+" instead")
		}
		return data, nil
	})
}

// Patch is one literal replacement for [Store.Patch].
type Patch struct {
	OldText string // text to find; must occur exactly once at its turn
	NewText string // replacement; may be empty to delete OldText
}

// Patch applies patches to the file at path, in order, and returns how many
// it applied: all of them, or none when any fails. Each OldText must occur
// exactly once in the text as the earlier patches left it (overlapping
// occurrences count) and is replaced literally by NewText. Patch splices
// only what the patches say: it does not touch the summary line.
//
// Patch returns an error wrapping [ErrPatchFailed] naming the failing patch,
// [ErrInvalidContent] for an empty list, [ErrNotFound] for a missing file,
// and the errors of [Store.Write] for the result.
func (s *Store) Patch(ctx context.Context, path string, patches []Patch) (int, error) {
	if _, err := s.patch(ctx, path, patches, nil); err != nil {
		return 0, err
	}
	return len(patches), nil
}

func (s *Store) patch(ctx context.Context, p string, patches []Patch, check guard) (data []byte, err error) {
	const op = "patch"
	t, end, err := s.start(ctx, op, p)
	if err != nil {
		return nil, err
	}
	defer end()
	if len(patches) == 0 {
		return nil, modelErr(op, t.path, ErrInvalidContent, "patches is empty", "; give at least one {oldText, newText} pair")
	}
	if len(patches) > maxPatches {
		return nil, modelErr(op, t.path, ErrInvalidContent, fmt.Sprintf("%d patches is more than the %d one call may make", len(patches), maxPatches),
			"; make fewer, larger patches, or memory_write the whole file")
	}
	size := 0
	for _, pt := range patches {
		size += len(pt.OldText) + len(pt.NewText)
	}
	if size > 2*maxFileSize {
		return nil, modelErr(op, t.path, ErrInvalidContent, fmt.Sprintf("the patches hold %s bytes, more than twice the %s-byte limit for one memory file", thousands(size), thousands(maxFileSize)), "; memory_write the whole file instead")
	}
	for i, pt := range patches {
		if err := checkText(op, t.path, fmt.Sprintf("patch %d of %d: newText", i+1, len(patches)), pt.NewText); err != nil {
			return nil, err
		}
	}
	return s.update(ctx, op, t, check, func(ctx context.Context, _ Held, old []byte) ([]byte, error) {
		if old == nil {
			return nil, modelErr(op, t.path, ErrNotFound, t.path+" does not exist", "; create it with memory_write or memory_append")
		}
		if !isText(old) {
			return nil, modelErr(op, t.path, ErrInvalidContent, t.path+" holds bytes that are not text (NUL bytes or invalid UTF-8, from an edit outside the memory tools), so it cannot be patched",
				"; memory_read it and memory_write the whole corrected text with the version memory_read gave")
		}
		data, err := applyPatches(op, t, string(old), patches)
		if err != nil {
			return nil, err
		}
		// What the patches made, together with the text around them, is held
		// to the rules of model text, unless the file broke them already
		// (a person's edit): it can still be patched elsewhere.
		switch {
		case loneCR(string(data)) && !loneCR(string(old)):
			return nil, modelErr(op, t.path, ErrInvalidContent, `the patched file would hold a carriage return (\r) that does not end a line with \n`,
				"; keep line endings as they are around oldText. Nothing was changed")
		case markdown.Nesting(string(data)) > max(maxNesting, markdown.Nesting(string(old))):
			return nil, modelErr(op, t.path, ErrInvalidContent, fmt.Sprintf("the patched file would nest blockquotes or lists more than %d levels deep", maxNesting), ". Nothing was changed")
		case !markdown.Closed(data) && markdown.Closed(old):
			return nil, modelErr(op, t.path, ErrInvalidContent, "the patched file would end inside an open block (a ``` or ~~~ code fence, an HTML comment, or an HTML block such as <pre>)",
				", so anything added after it would fall inside; close the block in newText. Nothing was changed")
		}
		return data, nil
	})
}

// applyPatches applies patches to text in order, all or nothing.
func applyPatches(op string, t target, text string, patches []Patch) ([]byte, error) {
	for i, pt := range patches {
		which := fmt.Sprintf("patch %d of %d", i+1, len(patches))
		if pt.OldText == "" {
			return nil, modelErr(op, t.path, ErrPatchFailed, which+": oldText is empty", "; copy the exact text to replace from memory_read. Nothing was changed")
		}
		switch n := occurrences(text, pt.OldText); n {
		case 1:
			text = strings.Replace(text, pt.OldText, pt.NewText, 1)
		case 0:
			return nil, modelErr(op, t.path, ErrPatchFailed, which+": oldText was not found in "+t.path+afterEarlier(i), "; call memory_read and copy the text exactly. Nothing was changed")
		default:
			times := fmt.Sprintf("%d times", n)
			if n > maxCount {
				times = fmt.Sprintf("more than %d times", maxCount)
			}
			return nil, modelErr(op, t.path, ErrPatchFailed, fmt.Sprintf("%s: oldText was found %s in %s%s", which, times, t.path, afterEarlier(i)), "; include more of the surrounding text so it matches once. Nothing was changed")
		}
	}
	return []byte(text), nil
}

func afterEarlier(i int) string {
	if i == 0 {
		return ""
	}
	return " (after the earlier patches were applied)"
}

// occurrences counts the occurrences of sub in s, overlapping ones
// included ("aa" occurs twice in "aaa"), up to maxCount+1: a patch needs
// no more to say what went wrong, and counting every overlapping occurrence
// of a long self-similar text would cost the product of the two lengths,
// under the lock.
func occurrences(s, sub string) int {
	n := 0
	for n <= maxCount {
		i := strings.Index(s, sub)
		if i < 0 {
			break
		}
		n++
		_, size := utf8.DecodeRuneInString(s[i:])
		s = s[i+size:]
	}
	return n
}

// maxCount is the most occurrences of a patch's oldText that are counted,
// and maxPatches the most patches one call may make: each scans the file
// under the lock.
const (
	maxCount   = 10
	maxPatches = 100
)

// thousands formats n with comma separators: 15360 → "15,360".
func thousands(n int) string { return thousands64(int64(n)) }

// thousands64 is thousands for a size that may not fit an int on 32 bits.
func thousands64(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
