package memory

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mdmemory/memory/internal/flock"
	"github.com/mdmemory/memory/internal/journal"
)

// A Dir is the [Backend] of a local directory, the one [Open] uses. Its
// contract, in the manner of google/renameio's:
//
//   - Names are confined to the directory with [os.Root]: no name, and no
//     symbolic link met on the way, reaches a file outside it. A link that
//     would is an error wrapping [ErrInvalidPath].
//   - A held lock's Write replaces a file atomically: it writes a
//     temporary dot-file beside it (".user.md.tmp-<random>"), fsyncs it,
//     renames it over the file, and fsyncs the folder. A reader sees the
//     old content or the new, never a mix, and after a crash the file is
//     one or the other; a Store opened on the Dir removes the temporary
//     files a crash left in its folders. A folder fsync that
//     fails after the rename is reported as such: the change is in place,
//     but may not survive a crash.
//   - Files and folders are private by default: a new file, ".lock"
//     included, has mode 0600 and a new folder 0700, so that another local
//     user can neither read the memory nor hold its lock. [OpenDir]'s
//     mode widens them (0660 and 0770 for a group that shares the
//     memory). The mode is set as given, whatever the process's umask. A
//     file replaced keeps its mode, and an existing folder or file is never
//     chmod'ed: a mode a person set is kept. The exception is ".lock", the
//     library's own file: an existing one gets the Dir's mode when the Dir
//     opens it (unless another user owns it).
//   - Every symbolic link is checked before it is followed: a link leads
//     only down from the folder it stands in (a relative target without
//     "..", not the folder itself), and never into another memory directory
//     (a folder with a ".lock") nested in this one. A link that breaks this
//     is an error wrapping [ErrInvalidPath]; List lists it, for the Store
//     to report. So when agents' directories sit inside a shared world's,
//     a link in world/ cannot reach an agent's facts. Nor can a link
//     swapped in for a folder or a file after the check: Read, Write and
//     Remove open the file's folder one folder at a time, each the folder
//     the check saw (a swap is looked at again, a few times, then
//     refused), and act inside that folder alone, on the file's name, so
//     that os.Root keeps a link in the file's place inside the folder; the
//     file read must be the one looked at, and it is opened without
//     waiting, should a FIFO be put in its place.
//   - A change lands in the folder its path names when it is made, or
//     fails as it would there: a folder renamed, removed, swapped for a
//     link or mounted over (a read-only bind mount of it over itself
//     included) since the Dir last used it is opened anew. The Dir keeps
//     the folders it used open only where it can tell that (Linux, whose
//     statx says the mount a folder is reached through). The directory
//     itself is looked at by its path under each lock taken: when its
//     path no longer names it (renamed away, replaced, mounted over),
//     Lock fails, saying so, and no change is made until the path names
//     it again, or the directory is opened anew. Reads take no lock, and
//     read the directory opened.
//   - A version is [Version] of the file's content, so that it is the same
//     token the tools give the model. A held lock's Write and Remove
//     compare it under the lock: the version this Dir read when the file's
//     stamp (number, size, modification and change times) is the one it
//     had then, else hashed anew (see Dir.version for what a stamp can
//     miss).
//   - Lock is one lock for the whole directory, whatever the name: the
//     lock file ".lock" and, where a folder can be locked (not Windows),
//     the directory itself, so that deleting ".lock" cannot let a second
//     writer in. Waiters in this process are served first come, first
//     served; between processes the system queues them (flock(2),
//     LockFileEx), so that no busy writer starves another. Files are
//     written and removed only through the lock held ([Held]).
//   - List tags a file by its size, modification time and file number.
//     A file changed within the last two seconds has no tag (""), since an
//     edit within the file system's time granularity could keep all three:
//     the Store reads it.
//   - A person's editor takes no lock: an edit saved in the instant between
//     a Write's comparison and its rename can be lost, as between any two
//     editors. Every other edit is seen by the next read, but one that
//     keeps the file's stamp: a Store reads a file it wrote from what it
//     wrote while the stamp is the one the write left (see Dir.version
//     for the edits that keep it). The stamp is taken from the file
//     opened, which a network file system checks with its server at the
//     open (NFS's close-to-open consistency).
//
// Non-regular files (devices, FIFOs), names starting with "." and folders
// below the top level that are symbolic links are not listed, nor what is
// in a folder under the one listed that cannot be read; reading a
// non-regular file is an error.
type Dir struct {
	root   *os.Root
	folder *os.File // the directory itself, flocked with lock where folders can be

	path    string      // the directory's absolute path, as given
	rootFI  fs.FileInfo // the directory opened, as Stat saw it then
	rootAt  place       // where the directory opened is, when known
	atKnown bool        // rootAt is known

	mu   sync.Mutex // guards lock, replaced when someone deletes .lock
	lock *os.File

	turn     chan struct{} // this process's queue for the lock, first come first served
	unlocked bool          // benchmarks only: skip the file locks
	mode     fs.FileMode   // of new files; folders get folderMode(mode)

	closed     atomic.Bool
	waiting    int  // guarded by mu: Lock's goroutines waiting in the system's queue, which use the files
	closeLater bool // guarded by mu: Close came while some waited; the last one closes the files

	seenMu sync.Mutex
	seen   map[string]seenFile // by name: the version of the files read whole, and their stamp then

	folders folders // the folders kept open (dirfolders.go)
}

// seenFile is what a Dir remembers of a file it read whole: its version,
// and its stamp before it was read.
type seenFile struct{ stamp, version string }

// maxSeen bounds the files a Dir remembers; it forgets them all past it.
const maxSeen = 1024

var _ Backend = (*Dir)(nil)

// lockName is the lock file in the root, the one file the library keeps
// besides the memory files.
const lockName = ".lock"

// tempMark sits between a target's name and a random suffix in the name of
// a temporary file: ".user.md.tmp-1x2y3z".
const tempMark = ".tmp-"

// defaultFileMode is the mode of the files a [Dir] creates when
// [OpenDir]'s mode or Options.FileMode is 0: the owner's alone.
// Folders get the same with search access, 0700.
const defaultFileMode fs.FileMode = 0o600

// racyWindow is how long after a file's modification time its size and
// time stop being trusted as a sign that it did not change: an edit within
// the file system's timestamp granularity of the last read could keep both.
const racyWindow = 2 * time.Second

// OpenDir opens the directory dir as a Backend, creating it if needed. A
// Store opened on it ([OpenBackend], or Options.World) first removes, under
// the Dir's lock, the temporary files a crash left behind in the folders it
// writes. Close releases the directory.
//
// mode is the mode of the files the Dir creates, its lock file included.
// 0 gives 0600, the owner's alone; 0660, say, suits a group of users (or
// of agents running as different users) that share the memory, such as a
// shared world. New folders get the same mode with search access wherever
// it gives read access (0600 gives 0700, 0660 gives 0770, 0640 gives
// 0750). The mode is set as given, whatever the process's umask; files and
// folders that exist keep theirs, but for the lock file, which gets mode
// (see [Dir]). A mode with other bits than read and write permissions, or
// without the owner's read and write, is an error.
func OpenDir(dir string, mode fs.FileMode) (*Dir, error) {
	return openDir(dir, mode)
}

// checkMode checks a file mode given for a Dir and applies the default.
func checkMode(mode fs.FileMode) (fs.FileMode, error) {
	if mode == 0 {
		return defaultFileMode, nil
	}
	if mode&^0o666 != 0 || mode&0o600 != 0o600 {
		return 0, fmt.Errorf("file mode %#o: give read and write permissions only (such as 0600, 0640 or 0660), the owner's included", uint32(mode))
	}
	return mode, nil
}

// folderMode is the mode of a new folder for files of mode m: m with search
// access wherever m gives read access.
func folderMode(m fs.FileMode) fs.FileMode { return m | m&0o444>>2 }

func openDir(dir string, mode fs.FileMode) (*Dir, error) {
	mode, err := checkMode(mode)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, folderMode(mode)); err != nil {
			return nil, err
		}
		if err := os.Chmod(dir, folderMode(mode)); err != nil && runtime.GOOS != "windows" {
			return nil, err
		}
	}
	// dir/. opens dir only when it is a folder: os.OpenRoot(dir) would
	// wait for good on a FIFO in its place.
	root, err := os.OpenRoot(dir + string(filepath.Separator) + ".")
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		root.Close()
		return nil, err
	}
	d := &Dir{root: root, turn: make(chan struct{}, 1), mode: mode, path: abs}
	if err := d.init(); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

func (d *Dir) init() (err error) {
	if d.lock, err = d.openLock(); err != nil {
		return err
	}
	if flock.Folders {
		if d.folder, err = d.root.Open("."); err != nil {
			return err
		}
	}
	d.folders.init(d.folder)
	if d.rootFI, err = d.root.Stat("."); err != nil {
		return err
	}
	if d.folder != nil {
		d.rootAt, d.atKnown = placeAt(d.folder, "")
	}
	return nil
}

// errMoved is returned by a Lock taken on a directory that its path no
// longer names: a change made in it would land where nobody looks.
var errMoved = errors.New("the memory directory was moved, replaced or mounted over since it was opened; open it again")

// rootIsCurrent reports, as errMoved, a directory that its path no longer
// names: renamed away, replaced, or mounted over (a bind mount of it over
// itself keeps its device and number: the mount tells, where the system
// says it).
func (d *Dir) rootIsCurrent() error {
	if d.atKnown {
		if now, ok := placeOfPath(d.path); ok {
			if now != d.rootAt {
				return &fs.PathError{Op: "lock", Path: d.path, Err: errMoved}
			}
			return nil
		}
	}
	now, err := os.Stat(d.path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err != nil || !os.SameFile(now, d.rootFI) {
		return &fs.PathError{Op: "lock", Path: d.path, Err: errMoved}
	}
	return nil
}

// Close releases the directory and its lock file. It waits for no Lock
// holder: call it when no change is under way. A Lock whose context ended
// while it waited for another process keeps the files open until it gets
// the lock, and lets go of them then.
func (d *Dir) Close() error {
	if d.closed.Swap(true) {
		return nil
	}
	d.mu.Lock()
	later := d.waiting > 0
	d.closeLater = later
	d.mu.Unlock()
	if later {
		return nil // the last waiter closes them
	}
	return d.closeFiles()
}

// waiterDone counts a waiting goroutine out, and closes the files when it
// was the last one and Close came meanwhile.
func (d *Dir) waiterDone() {
	d.mu.Lock()
	d.waiting--
	last := d.waiting == 0 && d.closeLater
	d.mu.Unlock()
	if last {
		d.closeFiles()
	}
}

func (d *Dir) closeFiles() error {
	var errs []error
	d.mu.Lock()
	if d.lock != nil {
		errs = append(errs, d.lock.Close())
	}
	d.mu.Unlock()
	if d.folder != nil {
		errs = append(errs, d.folder.Close())
	}
	d.folders.close()
	errs = append(errs, d.root.Close())
	return errors.Join(errs...)
}

// Lock takes the directory's lock (one for every name) and returns it,
// held. It waits as long as ctx allows, first for earlier callers in this
// process, then for other processes.
func (d *Dir) Lock(ctx context.Context, _ string) (Held, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	select {
	case d.turn <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	held := &dirHeld{d: d}
	if d.unlocked {
		return held, nil
	}
	ok, err := d.tryFlock()
	if err != nil {
		<-d.turn
		return nil, err
	}
	if !ok {
		// Wait in the system's queue. The wait cannot be cancelled: when
		// ctx ends first, the waiter lets go of the lock, and of this
		// process's turn, as soon as it gets it.
		got := make(chan error, 1)
		d.mu.Lock()
		d.waiting++
		d.mu.Unlock()
		go func() { got <- d.flockWait() }()
		select {
		case err = <-got:
			d.waiterDone()
		case <-ctx.Done():
			go func() {
				if <-got == nil {
					d.unflock()
				}
				<-d.turn
				d.waiterDone()
			}()
			return nil, ctx.Err()
		}
		if err != nil {
			<-d.turn
			return nil, err
		}
	}
	// Under the lock, so that the directory a change lands in is the one
	// its path names when the change is made.
	if err := d.rootIsCurrent(); err != nil {
		d.unflock()
		<-d.turn
		return nil, err
	}
	return held, nil
}

// dirHeld is the directory's lock, held: the one way to change its files.
type dirHeld struct {
	d    *Dir
	once sync.Once
	gone atomic.Bool // unlocked

	mu       sync.Mutex
	logs     map[string]*logFile // the files opened to append to, kept open until Unlock
	unsynced []*os.File          // appended to with sync, to be made durable before the next change
}

// A logFile is a file a held lock appends to.
type logFile struct {
	f  *os.File
	nl bool // it does not end with a newline: the next append starts with one
}

// Unlock releases the directory's lock. The appends made durable with the
// next change are made durable now, if no change came.
func (h *dirHeld) Unlock() {
	h.once.Do(func() {
		h.gone.Store(true)
		h.mu.Lock()
		syncAll(h.takeUnsynced())
		for _, l := range h.logs {
			l.f.Close()
		}
		h.logs = nil
		h.mu.Unlock()
		h.d.unflock()
		<-h.d.turn
	})
}

// errUnlocked is returned by a change made through a lock already
// released: a bug of the caller's.
var errUnlocked = errors.New("the lock was released: a change must be made while it is held")

// Write replaces the file at name with data if it is at version match.
// The appends made with sync are made durable before the file is
// replaced, at the same time as its new content.
func (h *dirHeld) Write(ctx context.Context, name string, data []byte, match string) (string, error) {
	if err := h.check(ctx, name, match); err != nil {
		return "", err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.gone.Load() {
		return "", errUnlocked
	}
	also := h.takeUnsynced()
	fi, err := h.d.replace(name, data, also)
	if err != nil && !errors.Is(err, ErrNotDurable) {
		// The file was not replaced, and the appends may not be durable
		// (replace can fail before its fsync): they are made durable
		// with the next change, as if this one had not come.
		h.unsynced = append(also, h.unsynced...)
		return "", err
	}
	h.closeLog(name)
	if err != nil {
		return "", err
	}
	v := versionOf(data)
	if fi != nil {
		h.d.remember(name, fi, v)
	}
	return v, nil
}

// Remove deletes the file at name if it is at version match, once the
// appends made with sync are durable.
func (h *dirHeld) Remove(ctx context.Context, name, match string) error {
	if match == "" {
		return fmt.Errorf("remove %s: %w: no version given", name, ErrChanged)
	}
	if err := h.check(ctx, name, match); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.gone.Load() {
		return errUnlocked
	}
	if err := syncAll(h.takeUnsynced()); err != nil {
		return err
	}
	h.closeLog(name)
	sub, done, err := h.d.folderOf(name, false)
	if err != nil {
		return err
	}
	defer done()
	if err := sub.Remove(path.Base(name)); err != nil {
		return err
	}
	return h.d.syncDir(sub, name)
}

// Size returns the size of the file at name, to be appended to: it opens
// the file for the appends that follow. It fails with fs.ErrNotExist when
// the file does not exist.
func (h *dirHeld) Size(ctx context.Context, name string) (int64, error) {
	if h.gone.Load() {
		return 0, errUnlocked
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.gone.Load() {
		// Unlock came meanwhile: it closed the files.
		return 0, errUnlocked
	}
	l, err := h.open(name, false)
	if err != nil {
		return 0, err
	}
	fi, err := l.f.Stat()
	if err != nil {
		h.closeLog(name)
		return 0, err
	}
	return fi.Size(), nil
}

// Append adds data at the end of the file at name, creating it (and its
// folders) if needed: the history's logs, which grow a record at a time.
// When sync is set, data is made durable before the next Write or Remove
// through the lock makes its change, with one fsync made at the same time
// as that of the change's own file (or at Unlock, when no change comes); a
// new file's folder is made durable at once. When the file does not end
// with a newline (a crash cut its last line), a newline goes first, so
// that the cut line stays a line of its own. A name that is a link, or no
// regular file, is refused. The file stays open until Unlock: another
// program that replaces it meanwhile takes what is appended since with the
// file it replaced.
func (h *dirHeld) Append(ctx context.Context, name string, data []byte, sync bool) error {
	if h.gone.Load() {
		return errUnlocked
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.gone.Load() {
		// Unlock came meanwhile: it closed the files.
		return errUnlocked
	}
	l, err := h.open(name, true)
	if err != nil {
		return err
	}
	if l.nl {
		data = append([]byte{'\n'}, data...)
	}
	if _, err := l.f.Write(data); err != nil {
		h.closeLog(name)
		return err
	}
	l.nl = len(data) > 0 && data[len(data)-1] != '\n'
	if sync && !slices.Contains(h.unsynced, l.f) {
		h.unsynced = append(h.unsynced, l.f)
	}
	return nil
}

// open returns the file at name opened to append to, from those the lock
// keeps open or opened now; with create, the file and its folders are
// made when they do not exist.
func (h *dirHeld) open(name string, create bool) (*logFile, error) {
	if l, ok := h.logs[name]; ok {
		return l, nil
	}
	sub, done, err := h.d.folderOf(name, create)
	if err != nil {
		return nil, err
	}
	defer done()
	base := path.Base(name)
	fi, err := sub.Lstat(base)
	created := create && errors.Is(err, fs.ErrNotExist)
	switch {
	case err != nil && !created:
		return nil, err
	case err == nil && !fi.Mode().IsRegular():
		return nil, &fs.PathError{Op: "append", Path: name, Err: fmt.Errorf("%w (%v)", errNotRegular, fi.Mode().Type())}
	}
	flag := os.O_RDWR | os.O_APPEND | openNonblock
	if create {
		flag |= os.O_CREATE
	}
	f, err := sub.OpenFile(base, flag, h.d.mode)
	if err != nil {
		return nil, err
	}
	// What was opened must be the file looked at, or, when none was
	// there, a regular file: a FIFO made in its place meanwhile would take
	// the records, and lose them.
	got, err := f.Stat()
	switch {
	case err != nil:
	case fi != nil && !os.SameFile(fi, got):
		err = &fs.PathError{Op: "append", Path: name, Err: errReplaced}
	case !got.Mode().IsRegular():
		err = &fs.PathError{Op: "append", Path: name, Err: fmt.Errorf("%w (%v)", errNotRegular, got.Mode().Type())}
	}
	l := &logFile{f: f}
	if err == nil && got.Size() > 0 {
		last := make([]byte, 1)
		if _, err = f.ReadAt(last, got.Size()-1); err == nil {
			l.nl = last[0] != '\n'
		}
	}
	if err == nil && created {
		err = h.d.syncDir(sub, name)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	if h.logs == nil {
		h.logs = map[string]*logFile{}
	}
	h.logs[name] = l
	return l, nil
}

// closeLog closes the file at name if the lock keeps it open: it was
// replaced or removed, or failed. A file still to be made durable (only
// a failed Append or Size closes one: a Write or Remove took them first) is
// fsynced as far as it goes and leaves those the next change fsyncs, where
// a closed file would fail every change through the lock: what it waited
// for is the record of a change not made, which records itself again.
func (h *dirHeld) closeLog(name string) {
	if l, ok := h.logs[name]; ok {
		if i := slices.Index(h.unsynced, l.f); i >= 0 {
			l.f.Sync()
			h.unsynced = slices.Delete(h.unsynced, i, i+1)
		}
		l.f.Close()
		delete(h.logs, name)
	}
}

// takeUnsynced returns the files appended to with sync since the last
// change, and forgets them.
func (h *dirHeld) takeUnsynced() []*os.File {
	u := h.unsynced
	h.unsynced = nil
	return u
}

// syncAll fsyncs files, all at the same time, and returns their errors.
func syncAll(files []*os.File) error {
	switch len(files) {
	case 0:
		return nil
	case 1:
		return files[0].Sync()
	}
	errs := make([]error, len(files))
	var wg sync.WaitGroup
	for i, f := range files[1:] {
		wg.Go(func() { errs[i+1] = f.Sync() })
	}
	errs[0] = files[0].Sync()
	wg.Wait()
	return errors.Join(errs...)
}

// check starts a Write or Remove: the lock must still be held, ctx live,
// and the file at version match.
func (h *dirHeld) check(ctx context.Context, name, match string) error {
	if h.gone.Load() {
		return errUnlocked
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	v, err := h.d.version(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if match != "" {
			return fmt.Errorf("%s: %w: it no longer exists", name, ErrChanged)
		}
		return nil
	case err != nil:
		return err
	case v != match:
		return fmt.Errorf("%s: %w", name, ErrChanged)
	}
	return nil
}

// tryFlock takes the folder's lock, where there is one, then the lock
// file's, without waiting; it holds neither when it reports false.
func (d *Dir) tryFlock() (bool, error) {
	for {
		if d.folder != nil {
			if ok, err := flock.TryLock(d.folder); !ok || err != nil {
				return false, err
			}
		}
		ok, err := flock.TryLock(d.lockFile())
		if !ok || err != nil {
			d.unflockFolder()
			return false, err
		}
		if current, err := d.lockIsCurrent(); err != nil || current {
			if err != nil {
				d.unflock()
			}
			return current, err
		}
		d.unflockFolder() // the lock file was replaced: try the new one
	}
}

// flockWait takes both locks, waiting for each.
func (d *Dir) flockWait() error {
	for {
		if d.folder != nil {
			if err := flock.Lock(d.folder); err != nil {
				return err
			}
		}
		if err := flock.Lock(d.lockFile()); err != nil {
			d.unflockFolder()
			return err
		}
		if current, err := d.lockIsCurrent(); err != nil || current {
			if err != nil {
				d.unflock()
			}
			return err
		}
		d.unflockFolder()
	}
}

// openLock opens the lock file, creating it with the Dir's mode when it
// does not exist. One that exists gets the Dir's mode too: its mode is the
// library's, not a person's, and earlier versions made it 0644, which let
// any local user hold a shared lock on it and block the owner. A lock file
// of another user's, which this one may not chmod, keeps its mode.
//
// The lock file may be deleted and made anew at any moment (by a person,
// or by a Dir that found it deleted): a create that finds it is followed
// by an open that creates it too, should it be gone since, so that no
// deletion between the two fails the open. What is opened must be a
// regular file; it is opened without waiting, should a FIFO stand there.
func (d *Dir) openLock() (*os.File, error) {
	f, err := d.root.OpenFile(lockName, os.O_RDWR|os.O_CREATE|os.O_EXCL|openNonblock, d.mode)
	if err == nil {
		if err := f.Chmod(d.mode); err != nil && runtime.GOOS != "windows" {
			f.Close()
			return nil, err
		}
		return f, nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	if f, err = d.root.OpenFile(lockName, os.O_RDWR|os.O_CREATE|openNonblock, d.mode); err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = &fs.PathError{Op: "open", Path: lockName, Err: fmt.Errorf("%w (%v)", errNotRegular, fi.Mode().Type())}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	f.Chmod(d.mode)
	return f, nil
}

// mkdirs creates the folder dir and those above it that do not exist, with
// the Dir's folder mode set as given.
// A link or a file in a folder's place is left as it is, for the
// operations on the folder to refuse or follow.
func (d *Dir) mkdirs(dir string) error {
	_, done, err := d.walk(dir, true)
	if err == nil {
		done()
	}
	if errors.Is(err, errReplaced) || errors.Is(err, syscall.ENOTDIR) {
		return nil
	}
	return err
}

// folderOf opens the folder of name, following only the links resolve
// allows, as a root of its own, and returns it with the function that
// closes it. With create, it makes the folders that do not exist, with the
// Dir's folder mode. A folder swapped for another since resolve looked at
// it is looked at again, a few times, before the operation is refused.
func (d *Dir) folderOf(name string, create bool) (sub *os.Root, done func(), err error) {
	// A folder kept open, still in its place with no link on its way, is
	// the folder resolve and walk would open.
	if sub, done, ok := d.folders.get(path.Dir(name)); ok {
		return sub, done, nil
	}
	for try := 0; ; try++ {
		dir, err := d.resolve(path.Dir(name))
		if err != nil {
			return nil, nil, err
		}
		sub, done, err = d.walk(dir, create)
		if !errors.Is(err, errReplaced) || try == 3 {
			if err != nil && !errors.Is(err, errReplaced) {
				err = d.pathErr(name, err)
			}
			return sub, done, err
		}
	}
}

// walk opens dir, a folder as resolve returned it, one folder at a time,
// each inside the one before it: every folder on the way must be the
// folder that Lstat saw in its place, not a symbolic link, so that no link
// put in its place since resolve looked leads anywhere. os.Root then keeps
// what is done in the folder inside it. With create, walk makes the folders
// that do not exist.
func (d *Dir) walk(dir string, create bool) (*os.Root, func(), error) {
	if sub, done, ok := d.folders.get(dir); ok {
		return sub, done, nil
	}
	cur, done := d.root, func() {}
	var parent *folder
	at := ""
	fail := func(err error) (*os.Root, func(), error) {
		done()
		return nil, nil, err
	}
	for part := range strings.SplitSeq(dir, "/") {
		if part == "" || part == "." {
			continue
		}
		fi, err := cur.Lstat(part)
		made := false
		if create && errors.Is(err, fs.ErrNotExist) {
			if err = cur.Mkdir(part, folderMode(d.mode)); err == nil || errors.Is(err, fs.ErrExist) {
				made = err == nil
				fi, err = cur.Lstat(part)
			}
		}
		switch {
		case err != nil:
			return fail(err)
		case fi.Mode()&fs.ModeSymlink != 0:
			return fail(&fs.PathError{Op: "open", Path: dir, Err: errReplaced})
		case !fi.IsDir():
			return fail(&fs.PathError{Op: "open", Path: dir, Err: syscall.ENOTDIR})
		}
		// Opened through part/. : os.Root opens part as a folder alone
		// (O_DIRECTORY), then the folder itself, so that a FIFO put in
		// its place since the look fails to open, where OpenRoot(part)
		// would wait for a writer of the FIFO for good.
		sub, err := cur.OpenRoot(part + "/.")
		if err != nil {
			return fail(err)
		}
		if got, err := sub.Stat("."); err != nil || !os.SameFile(fi, got) {
			sub.Close()
			return fail(&fs.PathError{Op: "open", Path: dir, Err: errReplaced})
		}
		if made {
			if err := sub.Chmod(".", folderMode(d.mode)); err != nil && runtime.GOOS != "windows" {
				sub.Close()
				return fail(err)
			}
		}
		done()
		at = path.Join(at, part)
		parent, cur, done = d.folders.put(parent, at, part, sub)
	}
	return cur, done, nil
}

func (d *Dir) lockFile() *os.File {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.lock
}

func (d *Dir) unflock() {
	if !d.unlocked {
		flock.Unlock(d.lockFile())
		d.unflockFolder()
	}
}

func (d *Dir) unflockFolder() {
	if d.folder != nil {
		flock.Unlock(d.folder)
	}
}

// lockIsCurrent reports whether the open lock file is still the root's
// .lock. When someone deleted or replaced it, other Dirs lock another
// file, so this one opens the current one instead (closing the old one
// releases its lock) and reports false.
func (d *Dir) lockIsCurrent() (bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	held, err := d.lock.Stat()
	if err != nil {
		return false, err
	}
	now, err := d.root.Stat(lockName)
	if err == nil && os.SameFile(held, now) {
		return true, nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	if d.closed.Load() {
		// A wait whose caller gave up went on past Close: no new lock
		// file for a Dir that is gone, whose folder may be going too.
		return false, fs.ErrClosed
	}
	lock, err := d.openLock()
	if err != nil {
		return false, err
	}
	d.lock.Close()
	d.lock = lock
	return false, nil
}

// Read returns the file at name, or its first limit bytes.
func (d *Dir) Read(ctx context.Context, name string, limit int64) (Content, error) {
	if err := ctx.Err(); err != nil {
		return Content{}, err
	}
	f, fi, err := d.open(name)
	if err != nil {
		return Content{}, err
	}
	defer f.Close()
	if limit >= 0 {
		// One byte more than is read, to see that the file grew since.
		size := min(fi.Size(), limit)
		buf := make([]byte, size, size+1)
		n, err := io.ReadFull(f, buf)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
			return Content{}, err
		}
		c := Content{Data: buf[:n], Size: fi.Size()}
		if int64(n) == fi.Size() {
			if extra, _ := f.Read(buf[n : n+1]); extra == 0 {
				c.Version = versionOf(c.Data)
				d.remember(name, fi, c.Version)
			}
		}
		return c, nil
	}
	// One buffer of the size Stat gave, and room to see that the file
	// grew since, as os.ReadFile does: io.ReadAll would grow its buffer
	// from 512 bytes, a dozen allocations and reads for a busy month.
	buf := bytes.NewBuffer(make([]byte, 0, fi.Size()+bytes.MinRead))
	if _, err := buf.ReadFrom(f); err != nil {
		return Content{}, err
	}
	b := buf.Bytes()
	c := Content{Data: b, Size: int64(len(b)), Version: versionOf(b)}
	d.remember(name, fi, c.Version)
	return c, nil
}

// remember notes the version of the file at name, read whole, and its stamp
// as fi, taken before the read, gives it: a change made during the read
// changes the stamp, so the version is never tied to a stamp it does not
// belong to.
func (d *Dir) remember(name string, fi fs.FileInfo, version string) {
	st := stamp(fi)
	if st == "" {
		return
	}
	d.seenMu.Lock()
	defer d.seenMu.Unlock()
	if d.seen == nil || len(d.seen) >= maxSeen {
		d.seen = map[string]seenFile{}
	}
	d.seen[name] = seenFile{st, version}
}

// open opens the regular file at name for reading, following only the
// links resolve allows.
func (d *Dir) open(name string) (*os.File, fs.FileInfo, error) {
	// A writer's rename between the look and the open puts another file in
	// the name's place, as a link would: look again, a few times, before
	// taking it for a link put there on purpose.
	for try := 1; ; try++ {
		f, fi, err := d.openOnce(name)
		if !errors.Is(err, errReplaced) || try == maxReopen {
			return f, fi, err
		}
	}
}

// maxReopen bounds the times open looks at a file replaced meanwhile.
const maxReopen = 8

// errReplaced marks a file that was not the one looked at when it was
// opened: see openOnce.
var errReplaced = errors.New("replaced while it was opened")

// openOnce is one try of open.
func (d *Dir) openOnce(name string) (*os.File, fs.FileInfo, error) {
	if f, fi, ok := d.openDirect(name); ok {
		return f, fi, nil
	}
	real, err := d.resolve(name)
	if err != nil {
		return nil, nil, err
	}
	sub, done, err := d.walk(path.Dir(real), false)
	if err != nil {
		if !errors.Is(err, errReplaced) {
			err = d.pathErr(name, err)
		}
		return nil, nil, err
	}
	defer done()
	base := path.Base(real)
	// Lstat first: opening a FIFO or a device could block or never end.
	fi, err := sub.Lstat(base)
	switch {
	case err != nil:
		return nil, nil, d.pathErr(name, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		// resolve followed every link: this one came since.
		return nil, nil, &fs.PathError{Op: "read", Path: name, Err: errReplaced}
	case !fi.Mode().IsRegular():
		return nil, nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("%w (%v)", errNotRegular, fi.Mode().Type())}
	}
	// Without blocking, where the system can, should a FIFO be put in
	// the file's place since.
	f, err := openRead(sub, base)
	if err != nil {
		return nil, nil, d.pathErr(name, err)
	}
	// A link put in the file's place since would have been followed
	// (inside the folder alone, as sub is its root): the file opened must
	// be the one looked at.
	if got, err := f.Stat(); err != nil || !os.SameFile(fi, got) {
		f.Close()
		return nil, nil, &fs.PathError{Op: "read", Path: name, Err: errReplaced}
	}
	return f, fi, nil
}

// openDirect opens the regular file at name when name is a plain path (see
// fs.ValidPath: no ".." to take after a link) and there is no link on its
// way, which is the common case: then resolve would return name as it is,
// and the walk and the looks below are those openOnce makes after it (each
// folder and the file the one Lstat saw, none a link), without the look
// at each part from the root that resolve takes first. In any other case
// (a link, a file missing or not regular, an error) it opens nothing and
// reports false, for openOnce to resolve the links and word the error.
func (d *Dir) openDirect(name string) (*os.File, fs.FileInfo, bool) {
	if !fs.ValidPath(name) {
		return nil, nil, false
	}
	sub, done, err := d.walk(path.Dir(name), false)
	if err != nil {
		return nil, nil, false
	}
	defer done()
	base := path.Base(name)
	fi, err := sub.Lstat(base)
	if err != nil || !fi.Mode().IsRegular() {
		return nil, nil, false
	}
	f, err := openRead(sub, base)
	if err != nil {
		return nil, nil, false
	}
	if got, err := f.Stat(); err != nil || !os.SameFile(fi, got) {
		f.Close()
		return nil, nil, false
	}
	return f, fi, true
}

// openRead opens the file base in the folder sub to read it: without
// waiting, should a FIFO be put in its place, and without updating its
// access time where the system lets the file's owner (and only it) ask.
func openRead(sub *os.Root, base string) (*os.File, error) {
	f, err := sub.OpenFile(base, os.O_RDONLY|openNonblock|openNoatime, 0)
	if openNoatime != 0 && errors.Is(err, fs.ErrPermission) {
		f, err = sub.OpenFile(base, os.O_RDONLY|openNonblock, 0)
	}
	return f, err
}

// maxLinks bounds the links resolve follows for one name, as the system's
// own bound (40 on Linux) does.
const maxLinks = 40

// resolve returns name with the symbolic links on its way followed, as
// os.Root follows them, checking each before it is followed: its target
// must lead down from the folder the link stands in (relative, without a
// ".." part, and not the folder itself), and no folder reached through a
// link may be another memory directory (one with a ".lock"), such as an
// agent's inside the root of the world it shares. A link that breaks
// either is an error wrapping errOutside. What does not exist on the way is
// left to the operation to find.
func (d *Dir) resolve(name string) (string, error) {
	rest := strings.Split(name, "/")
	done, links := ".", 0
	for len(rest) > 0 {
		part := rest[0]
		rest = rest[1:]
		if part == "" || part == "." {
			continue
		}
		next := path.Join(done, part)
		fi, err := d.root.Lstat(next)
		if err != nil {
			return path.Join(append([]string{next}, rest...)...), nil
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			done = next
			if links > 0 && fi.IsDir() {
				if _, err := d.root.Lstat(path.Join(done, lockName)); err == nil {
					return "", &fs.PathError{Op: "open", Path: name, Err: errLeaves}
				}
			}
			continue
		}
		target, err := d.root.Readlink(next)
		if err != nil {
			return "", d.pathErr(name, err)
		}
		if links++; links > maxLinks || !downward(target) {
			err := errLeaves
			if t := filepath.ToSlash(target); path.IsAbs(t) || filepath.IsAbs(target) || filepath.VolumeName(target) != "" || strings.HasPrefix(path.Join(done, t), "..") {
				err = errOutside
			}
			return "", &fs.PathError{Op: "open", Path: name, Err: err}
		}
		rest = append(strings.Split(filepath.ToSlash(target), "/"), rest...)
	}
	return done, nil
}

// downward reports whether a link's target leads down from the folder the
// link stands in: relative, without "..", and not that folder itself.
func downward(target string) bool {
	if target == "" || filepath.IsAbs(target) || path.IsAbs(filepath.ToSlash(target)) || filepath.VolumeName(target) != "" {
		return false
	}
	down := false
	for part := range strings.SplitSeq(filepath.ToSlash(target), "/") {
		switch part {
		case "..":
			return false
		case "", ".":
		default:
			down = true
		}
	}
	return down
}

// pathErr returns err, or errOutside in its place when the access failed
// because of a link out of the root: os.Root does not export its "path
// escapes" error, so Dir looks at the links themselves.
func (d *Dir) pathErr(name string, err error) error {
	if !errors.Is(err, fs.ErrNotExist) && (d.isLink(path.Dir(name)) || d.isLink(name)) {
		return &fs.PathError{Op: "open", Path: name, Err: errOutside}
	}
	return err
}

func (d *Dir) isLink(name string) bool {
	fi, err := d.root.Lstat(name)
	return err == nil && fi.Mode()&fs.ModeSymlink != 0
}

// version is [Version] of the file at name. When the file's stamp is the
// one it had when this Dir last read it whole (the Store reads a file
// under the lock before it changes it) or wrote it, the version is the one
// read or written then, and the file is not read again; otherwise it is
// hashed as it is read: a file a person made large takes time, but no
// memory. The stamp's times are the system's, which on many systems move
// in steps of a few milliseconds: a program that rewrote the file in place
// with as many bytes, within the same step as the change before it and
// after the read or the write, or that removed it and made it anew with as
// many bytes under the same file number within that step, would go unseen,
// as would an edit saved between the comparison and the rename (see
// [Dir]).
func (d *Dir) version(name string) (string, error) {
	f, _, err := d.open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if v, ok := d.seenAs(name, f); ok {
		return v, nil
	}
	return journal.ReadVersion(f)
}

// unchanged reports whether the file at name is still at version, as
// this Dir last read or wrote it, by its stamp (see Dir.version).
func (d *Dir) unchanged(name, version string) bool {
	v, ok := d.seenVersion(name)
	return ok && v == version
}

// seenVersion returns the version this Dir read or wrote of the file at
// name when the file's stamp is still the one it had then, without reading
// the file; false otherwise.
func (d *Dir) seenVersion(name string) (string, bool) {
	d.seenMu.Lock()
	_, ok := d.seen[name]
	d.seenMu.Unlock()
	if !ok {
		return "", false
	}
	f, _, err := d.open(name)
	if err != nil {
		return "", false
	}
	defer f.Close()
	return d.seenAs(name, f)
}

// seenAs returns the version this Dir read or wrote of the file at name
// when f, the file opened, has the stamp the file had then. The stamp is
// the open file's, which a network file system checks with its server at
// the open (NFS's close-to-open consistency), where a look at the name
// could be answered from a cache.
func (d *Dir) seenAs(name string, f *os.File) (string, bool) {
	fi, err := f.Stat()
	if err != nil {
		return "", false
	}
	st := stamp(fi)
	d.seenMu.Lock()
	seen, ok := d.seen[name]
	d.seenMu.Unlock()
	if !ok || st == "" || seen.stamp != st {
		return "", false
	}
	return seen.version, true
}

// replace writes data to name atomically, creating its folder if needed.
// Every step after resolving the folder is made inside it, on names
// without a folder: a link swapped in for the folder cannot redirect the
// write. The files also are fsynced at the same time as the new content,
// before the rename: a failure of either leaves the file as it was. It
// returns the file's info as it stands after the rename, when that is
// still the file written (its number, size and modification time), for
// the Dir to remember its version by; nil when it cannot tell.
func (d *Dir) replace(name string, data []byte, also []*os.File) (written fs.FileInfo, err error) {
	sub, done, err := d.folderOf(name, true)
	if err != nil {
		return nil, err
	}
	defer done()
	base := path.Base(name)
	perm := d.mode
	if fi, err := sub.Stat(base); err == nil {
		perm = fi.Mode().Perm()
	}
	f, tmp, err := createTemp(sub, base, perm)
	if err != nil {
		return nil, d.pathErr(name, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			sub.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return nil, err
	}
	// The umask applied at creation: the file gets the mode of the file
	// it replaces, or the Dir's, as they are.
	if err = f.Chmod(perm); err != nil && runtime.GOOS != "windows" {
		return nil, err
	}
	if err = syncAll(append(also, f)); err != nil {
		return nil, err
	}
	made, _ := f.Stat()
	if err = f.Close(); err != nil {
		return nil, err
	}
	if err = sub.Rename(tmp, base); err != nil {
		return nil, err
	}
	if made != nil && stamp(made) != "" {
		if now, err := sub.Lstat(base); err == nil && os.SameFile(made, now) && now.Size() == made.Size() && now.ModTime().Equal(made.ModTime()) {
			written = now
		}
	}
	return written, d.syncDir(sub, name)
}

// createTemp creates a temporary file for base in the folder sub.
func createTemp(sub *os.Root, base string, perm fs.FileMode) (f *os.File, tmp string, err error) {
	for range 100 {
		tmp = "." + base + tempMark + strconv.FormatUint(rand.Uint64(), 36)
		f, err = sub.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|openNonblock, perm)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	return f, tmp, err
}

// ErrNotDurable is returned, wrapped, by a [Dir]'s Write and Remove when
// the change is made but the fsync of its folder failed: the file is
// replaced (or gone), and readers see it so, but the change may not survive
// a crash of the machine.
var ErrNotDurable = errors.New("made, but the folder's fsync failed: the change may not survive a crash")

// syncDir makes a rename or removal in the folder sub durable, through
// the folder's own file when the Dir keeps it open. Windows cannot fsync a
// directory; there the rename is durable when the file system says so.
func (d *Dir) syncDir(sub *os.Root, name string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	f, done, err := d.folders.file(sub)
	if err == nil {
		err = f.Sync()
		done()
	}
	if err != nil {
		return fmt.Errorf("%s: %w (%v)", name, ErrNotDurable, err)
	}
	return nil
}

// List returns the regular files in dir and the folders under it (the
// whole directory when dir is ""), without dot-files and dot-folders. A
// folder that cannot be read under dir is an error; one that is a link is
// skipped, and dir itself being a link is an error.
func (d *Dir) List(ctx context.Context, dir string) ([]Entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dir = strings.TrimSuffix(dir, "/")
	if strings.Contains(dir, "/") && d.isLink(dir) {
		// A link out of the root is refused by os.Root; one inside it, below
		// a folder, could make one folder another (an archive that is the
		// episodes). A top-level folder that links inside the root is
		// followed, as reads and writes follow it.
		return nil, &fs.PathError{Op: "list", Path: dir, Err: errLinkedFolder}
	}
	var entries []Entry
	err := d.list(dir, time.Now(), &entries)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // no such folder: no files
	}
	if err != nil {
		return nil, err
	}
	slices.SortFunc(entries, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	return entries, nil
}

func (d *Dir) list(dir string, now time.Time, entries *[]Entry) error {
	open := dir
	if open == "" {
		open = "."
	}
	f, err := d.root.OpenFile(open, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return d.pathErr(open, err)
	}
	des, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return err
	}
	for _, de := range des {
		if strings.HasPrefix(de.Name(), ".") {
			continue
		}
		name := path.Join(dir, de.Name())
		var fi fs.FileInfo
		if de.Type()&fs.ModeSymlink != 0 {
			real, rerr := d.resolve(name)
			if rerr != nil {
				// A link Dir does not follow, below the top level and not
				// to a folder: listed, so that the Store, reading it, says
				// why it cannot.
				if fi, err := d.root.Stat(name); dir != "" && errors.Is(rerr, errOutside) && (err != nil || !fi.IsDir()) {
					*entries = append(*entries, Entry{Name: name})
				}
				continue
			}
			fi, err = d.root.Stat(real) // a link that leads down is followed
		} else {
			fi, err = de.Info()
		}
		if err == nil && fi.IsDir() && (de.IsDir() || dir == "") {
			// A folder under dir (a link only at the top, as List follows
			// those). One that cannot be read is left out, not the rest:
			// List of the folder itself says why.
			d.list(name, now, entries)
			continue
		}
		if err != nil || !fi.Mode().IsRegular() {
			continue // gone since, a link out of the root or to a folder, or no file
		}
		e := Entry{Name: name, Size: fi.Size()}
		if mt := fi.ModTime(); mt.Before(now.Add(-racyWindow)) {
			e.Tag = strconv.FormatInt(fi.Size(), 36) + "-" + strconv.FormatInt(mt.UnixNano(), 36) + "-" + fileID(fi)
		}
		*entries = append(*entries, e)
	}
	return nil
}

// removeTemps deletes, under the lock, the temporary files a crash left
// behind (those of replace, ".user.md.tmp-1x2y3z") in the folders the
// Store names: the ones it writes. It walks no other folder and follows
// no link, so a Dir opened on a folder that holds other things (a home
// directory) touches nothing else; and it removes only what is named as a
// Dir names its temporary files. A folder it cannot read has nothing to
// clean.
func (d *Dir) removeTemps(ctx context.Context, folders []string) error {
	h, err := d.Lock(ctx, "")
	if err != nil {
		return err
	}
	defer h.Unlock()
	for _, dir := range folders {
		if err := d.removeTempsIn(dir); err != nil {
			return err
		}
	}
	return nil
}

// removeTempsIn removes the temporary files in the folder dir, opened as
// walk opens it (no link on the way, a folder swapped for a link or a
// FIFO since the look refused), and acts inside it alone.
func (d *Dir) removeTempsIn(dir string) error {
	sub, done, err := d.walk(dir, false)
	if err != nil {
		return nil
	}
	defer done()
	f, err := sub.OpenFile(".", os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil
	}
	des, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return nil
	}
	for _, de := range des {
		if de.Type().IsRegular() && isTemp(de.Name()) {
			if err := sub.Remove(de.Name()); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}

// isTemp reports a name createTemp makes: "." + a file's name + tempMark +
// a random number in base 36.
func isTemp(name string) bool {
	i := strings.LastIndex(name, tempMark)
	if i <= 1 || name[0] != '.' {
		return false
	}
	suffix := name[i+len(tempMark):]
	return suffix != "" && len(suffix) <= 13 && strings.Trim(suffix, "0123456789abcdefghijklmnopqrstuvwxyz") == ""
}
