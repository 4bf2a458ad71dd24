package memory

import (
	"bytes"
	"cmp"
	"container/list"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mdmemory/memory/internal/factguard"
	"github.com/mdmemory/memory/internal/journal"
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

	// History bounds the history of changes the store records (see
	// [Store.History]); the zero value records every change and keeps
	// every version of the last 90 days, at least the last 20 of each
	// file, and at most 64 MiB of logs. History.Off records nothing.
	History HistoryPolicy

	// Embedder, when not nil, adds semantic search to Store.Search and
	// memory_search: the keyword ranking is fused with one by the
	// similarity of vectors the Embedder gives (see [Embedder] and
	// [Store.Search]). nil searches by keywords alone.
	Embedder Embedder

	// Secrets finds the credentials' values that a change may not add
	// to memory ([ErrSecret]) and that [Store.Check] reports where they
	// are. nil means the library's own detector, which knows the API keys
	// and tokens of the common providers (OpenAI, Anthropic, AWS, GitHub,
	// GitLab, Slack, Stripe, Google and more), private key blocks, JSON
	// Web Tokens, bearer tokens, and passwords alone or in a connection
	// string, and matches the shape of a value, never a mention. A host
	// may give its own (see [SecretDetector]); one that finds nothing
	// switches the guard off.
	Secrets SecretDetector
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

	headsMu  sync.Mutex
	heads    map[string]cachedHead // what List read of each file, by path; released with the index
	facts    factCache             // the fact guard's parsed versions of the fact files (factguard.go)
	docs     docCache              // the structure of the files the Store's appends made
	hist     logs                  // the history's logs the Store wrote (history.go)
	logCount atomic.Int64          // the logs there are, as last counted (0: not yet), for their share of the bound
	sealed   sync.Map              // month → the number of its newest part, as this Store last listed or sealed it (a hint; see lastPart)

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
	for _, sub := range []string{paths.FactsDir, paths.EpisodesDir} {
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
	if err := sweep(b, o.LockTimeout, storeFolders()...); err != nil {
		return nil, err
	}
	if o.World != nil {
		if err := sweep(o.World, o.LockTimeout, worldFolders()...); err != nil {
			return nil, err
		}
		b = split{own: b, world: o.World}
	}
	return &Store{b: b, opts: o, turn: make(chan struct{}, 1)}, nil
}

// storeFolders are the folders of its own backend a store writes.
func storeFolders() []string {
	own := []string{".", paths.FactsDir, paths.EpisodesDir, paths.EpisodesDir + "/" + paths.ArchiveDir, cacheDir}
	for _, f := range own[:4] {
		own = append(own, path.Join(paths.HistoryDir, f)) // the logs' rewrites
	}
	return own
}

// worldFolders are the folders of the World backend a store writes.
func worldFolders() []string {
	return []string{paths.WorldDir, paths.HistoryDir + "/" + paths.WorldDir}
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
	if o.History.MaxAge < 0 || o.History.MinVersions < 0 || o.History.MaxBytes < 0 {
		return errors.New("memory: open: History.MaxAge, History.MinVersions and History.MaxBytes may not be negative")
	}
	if o.FactsBudget < 0 || o.ProceduresBudget < 0 || o.WorldBudget < 0 || o.IndexBudget < 0 || o.LockTimeout < 0 || o.MaxSessions < 0 || o.IndexIdle < 0 {
		return errors.New("memory: open: FactsBudget, ProceduresBudget, WorldBudget, IndexBudget, LockTimeout, MaxSessions and IndexIdle may not be negative")
	}
	if _, err := checkMode(o.FileMode); err != nil {
		return fmt.Errorf("memory: open: Options.FileMode: %w", err)
	}
	o.WorldBudget = cmp.Or(o.WorldBudget, defaultWorldBudget)
	o.ProceduresBudget = cmp.Or(o.ProceduresBudget, defaultProceduresBudget)
	o.MaxSessions = cmp.Or(o.MaxSessions, defaultMaxSessions)
	o.LockTimeout = cmp.Or(o.LockTimeout, defaultLockTimeout)
	o.FactsBudget = cmp.Or(o.FactsBudget, defaultFactsBudget)
	o.IndexBudget = cmp.Or(o.IndexBudget, defaultIndexBudget)
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

func (s *Store) now() time.Time { return s.opts.Now() }

// defaultProceduresBudget is the size, in bytes, procedures.md may have
// when Options.ProceduresBudget is 0: about 40 rules, little enough to load
// whole into a prompt.
const defaultProceduresBudget = 4096

// defaultWorldBudget is the size, in bytes, the world topics may have
// together when Options.WorldBudget is 0: as much as the fact files.
const defaultWorldBudget = 15360

// An Embedder turns texts into vectors, for semantic search: set
// Options.Embedder to use one. Embed returns one vector per text, in the
// order of texts, all of the same length; the vectors are compared by
// cosine similarity, so their scale does not matter. It must be safe for
// concurrent use: searches of one Store, and of several, may call it at
// once. [Store.Search] calls it, with no lock held, with at most 64 texts
// at a time: the query first, then the documents that have no vector yet,
// each cut to its first 2,000 characters.
//
// An Embedder may also have either of these methods, which Search finds by
// type assertion:
//
//	Model() string   // names the model and its settings
//	Floor() float64  // the similarity under which a document is no semantic hit
//
// Model names the cache of vectors: vectors of one model are never used
// for another. Without it, the cache is named for "" and the vectors are
// dropped only when the model gives vectors of another length; give Model
// when switching between models that give vectors of one length. Floor,
// when it returns a value in (0, 1), replaces the default of 0.35: where
// the similarities of unrelated texts lie depends on the model.
// The module's openaiembed package is an Embedder for OpenAI-compatible
// /v1/embeddings endpoints (OpenAI, Ollama, vLLM, llama.cpp), with both.
//
// The vectors are derived data, never written into the memory files.
// Search keeps each one made unit length, as 8-bit numbers on a scale of
// its own and their rounding error, 8-bit too, on another: about 1/30,000
// of each number off, 2 bytes a number (a model of 768 numbers costs 1.5
// KB a document for the vector, 2.3 KB in all, where float32s took 3 KB),
// and cosine similarity is taken on these stored vectors. At each search
// it compares the query's vector, in 8 bits too, with every document's
// first 8 bits (integer arithmetic, SSE2 on amd64: about 0.05 µs a
// document of 384 numbers), then ranks the best 100, or twice the depth
// it needs, by the exact cosine of the query's float vector with theirs,
// so that the order of what it returns is the exact cosine's. It keeps the vectors on
// the backend in one object per model, ".cache/vectors-<16 hex digits>.bin"
// (the hash of Model's name), which no listing, search or tool shows. A
// vector is found by the SHA-256 of the text embedded, so that a new Store
// embeds only documents that changed since, and a document a person edits
// is embedded again by the next search. The object is rewritten whole,
// with the backend's conditional write, after a search that embedded
// something or found documents gone (their vectors are dropped); when
// another Store wrote it since, their vectors are merged in. A cache that
// is missing, corrupt or cannot be written costs embeddings, never a
// search. Deleting it is safe.
//
// An error from Embed is not returned by Search: the search ranks by
// keywords alone, exactly as without an Embedder, and the next search
// tries again. The error went through the host's own Embedder, which may
// log or count it (wrap it to do so); a failing Embedder does not cost the
// model its search. A done context is returned as the error it is.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// cacheDir is the folder of the vector caches: a dot-folder, which no
// listing shows.
const cacheDir = ".cache"

// sessions is the store's table of conversations named by the host, most
// recently used first.
type sessions struct {
	mu   sync.Mutex
	byID map[string]*list.Element // id → element of lru holding its *Session
	lru  list.List
}

// A factCache holds the versions of the fact files and world topics the
// fact guard has seen, parsed and indexed: the last two of each path (the
// content a change started from and the content it wrote, or a change
// that failed and its retry), told apart by their content, so that a file
// changed by anyone is parsed again.
type factCache struct {
	mu    sync.Mutex
	files map[string][2]*factguard.File // by path, the newest first
}

// A docCache holds the structure (markdown.Doc) of the last content an
// append, a write or the fact guard (of a patch) made of each file, for
// the last few files changed, so
// that the next append to the file, and the fact guard, parse only what is
// new. An entry is used only for the very content it was made of. Once
// the change landed, the entry has the file's version too: then, on a
// backend that can tell the file is still at that version without reading
// it (a Dir, by its stamp), the content is read from the entry
// (Store.known).
type docCache struct {
	mu   sync.Mutex
	docs map[string]cachedDoc // by path
}

type cachedDoc struct {
	d       *markdown.Doc
	version string // the file's version, once the change that made d landed
}

// maxDocs bounds the files a docCache holds; it forgets them all past it.
const maxDocs = 32

// get returns the Doc of src, the content of the file at path, when the
// cache has it; nil otherwise.
func (c *docCache) get(path string, src []byte) *markdown.Doc {
	c.mu.Lock()
	e := c.docs[path]
	c.mu.Unlock()
	if e.d == nil || !bytes.Equal(e.d.Src(), src) {
		return nil
	}
	return e.d
}

// put keeps d as the structure of the file at path.
func (c *docCache) put(path string, d *markdown.Doc) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.docs == nil || len(c.docs) >= maxDocs {
		c.docs = map[string]cachedDoc{}
	}
	c.docs[path] = cachedDoc{d: d}
}

// landed notes that the file at path is at version with the content data,
// when the cache holds the Doc of data.
func (c *docCache) landed(path string, data []byte, version string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.docs[path]; ok && bytes.Equal(e.d.Src(), data) {
		c.docs[path] = cachedDoc{d: e.d, version: version}
	}
}

// current returns the Doc of the file at path, as the Store last made it
// and saw it land, with its version; nil when there is none.
func (c *docCache) current(path string) (*markdown.Doc, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.docs[path]
	if e.version == "" {
		return nil, ""
	}
	return e.d, e.version
}

// forget drops every Doc held.
func (c *docCache) forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.docs = nil
}

// cachedHead is what List read of a file with a given tag.
type cachedHead struct {
	tag  string
	info FileInfo
}

// HistoryPolicy bounds the history a Store keeps. The zero value keeps it
// on: every version of the last 90 days, at least the last 20 of each file
// whatever their age, and at most 64 MiB of logs in all.
type HistoryPolicy struct {
	// Off records nothing: the logs there are stay as they are.
	Off bool
	// MaxAge keeps every version younger. 0 means 90 days.
	MaxAge time.Duration
	// MinVersions keeps at least the last so many versions of each file,
	// whatever their age. 0 means 20.
	MinVersions int
	// MaxBytes bounds the size of all the logs of a backend together: each
	// log gets its share, its oldest versions going first, never the
	// current one. A log's size is judged as each record is appended to
	// it (and at Compact): a log over its share has its oldest segments
	// removed at once, to three quarters of it, so that it is not pruned
	// again at its next change, and no log passes its share by more than
	// its last segment (a quarter of the share at most, and one record).
	// The log of a month's sealed part takes no share: it is the one
	// record of the seal, written once and never pruned (a log's last
	// segment never is), so that the parts of a busy month do not make
	// the share of its own log small. A log keeps the segment that
	// records its file's current version; past its share, the versions
	// MinVersions keeps give way to this bound. 0 means 64 MiB.
	MaxBytes int64
}

// defaultHistoryBytes is HistoryPolicy.MaxBytes when 0.
const defaultHistoryBytes = 64 << 20

// logs is what a Store knows of the logs it wrote: their records, while
// the log is the size it was.
type logs struct {
	mu sync.Mutex
	by map[string]*logState // by the path of the memory file
}

// maxLogs bounds the logs a Store remembers; it forgets them all past it.
const maxLogs = 64

type logState struct {
	seg       segment          // the log's last segment (n 0: none yet, or only a log of the earlier layout)
	records   []journal.Record // its records
	known     *segData         // its content and version, where the Store rewrites it (a backend that cannot append); nil when not kept
	unread    bool             // it was too large to read: the next record starts a segment
	closed    int64            // the size of the segments before it, together
	segs      int              // the log's segments, the last included
	oldestEnd time.Time        // the oldest segment's records were all made before: the next segment's first record's time; zero when not known, or one segment
	changes   int              // the records of changes in the last segment, their marks left out

	// end is the version the log's landed records end at (journal.End of
	// journal.Landed), when endKnown: after this Store's own mark said its
	// record landed. Else it is worked out from the records.
	end      string
	endKnown bool
}

func (l *logs) get(name string) *logState {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.by[name]
}

func (l *logs) put(name string, st *logState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.by == nil || len(l.by) >= maxLogs {
		l.by = map[string]*logState{}
	}
	l.by[name] = st
}

func (l *logs) forget() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.by = nil
}
