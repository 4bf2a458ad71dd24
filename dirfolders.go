package memory

import (
	"os"
	"slices"
	"sync"
)

// The folders a Dir keeps open. Every Read, Write, Remove and Append opens
// the file's folder one folder at a time (Dir.walk), which on most systems
// costs four system calls a folder: look, open, look again, close. A Dir
// keeps the folders it opened, and an operation takes the folder it kept
// when every folder on the way is still the one it opened: a look at each
// (statx(2) from the folder above, kept open too) finds the same folder,
// not a link, in its place, reached through the same mount. A folder
// renamed, removed, swapped for a link or mounted over since (a bind mount
// of a folder over itself, "mount --bind -o ro facts facts", keeps its
// device and number: only the mount differs) fails that look; the Dir then
// forgets it and walks again, as it did before it kept any. So a kept
// folder is used exactly when a new walk would open that same folder, and
// a change lands in the folder its path names now, or fails as it would
// there.
//
// Folders are kept where the system says the mount a folder is reached
// through (Linux's statx, since 5.8), and where an open folder stands in
// nobody's way (not Windows, where it would stop a person from renaming or
// removing the folder while the Dir is open). Elsewhere none is kept: every
// operation walks.

// maxFolders bounds the folders a Dir keeps open (two files each: the
// folder as a root, and as a file to look in and fsync); past it, it
// closes them all and starts again.
const maxFolders = 32

// A place is where a folder is: its device and number, and the mount it is
// reached through. Only Linux says it (dirplace_linux.go); elsewhere no
// place is made, and no folder is kept.
//
//lint:ignore U1000 set and compared on Linux only
type place struct{ dev, ino, mnt uint64 }

// folders is the folders a Dir keeps, by their path from the Dir's root
// ("episodes", ".history/episodes").
type folders struct {
	top    *os.File // the Dir's root, opened as a file; nil: no folder is kept
	mu     sync.Mutex
	m      map[string]*folder
	byRoot map[*os.Root]*folder
	closed bool
}

// A folder is one folder kept open.
type folder struct {
	path   string   // its path from the Dir's root
	name   string   // its name in its parent
	parent *folder  // nil for a folder of the Dir's root
	root   *os.Root // the folder, open
	file   *os.File // the folder opened as a file: to look at the folders in it, and to fsync it
	at     place    // where the folder opened is
	refs   int      // guarded by folders.mu: the operations using root
	gone   bool     // guarded by folders.mu: forgotten; closed once refs is 0
}

// init has c keep the folders of the Dir whose root is open as top, where
// their places can be known.
func (c *folders) init(top *os.File) {
	if top == nil {
		return
	}
	if _, ok := placeAt(top, ""); ok {
		c.top = top
	}
}

// get returns the folder dir kept, with the function that releases it,
// when every folder on its way is still in its place; false otherwise.
func (c *folders) get(dir string) (*os.Root, func(), bool) {
	if c.top == nil {
		return nil, nil, false
	}
	c.mu.Lock()
	leaf := c.m[dir]
	var chain []*folder // from the top down
	for f := leaf; f != nil; f = f.parent {
		if f.gone {
			c.mu.Unlock()
			return nil, nil, false
		}
		chain = append(chain, f)
	}
	if leaf == nil {
		c.mu.Unlock()
		return nil, nil, false
	}
	for _, f := range chain {
		f.refs++
	}
	c.mu.Unlock()
	slices.Reverse(chain)
	ok, parent := true, c.top
	for _, f := range chain {
		if at, found := placeAt(parent, f.name); !found || at != f.at {
			ok = false
			c.forget(f)
			break
		}
		parent = f.file
	}
	for _, f := range chain[:len(chain)-1] {
		c.release(f)
	}
	if !ok {
		c.release(leaf)
		return nil, nil, false
	}
	return leaf.root, func() { c.release(leaf) }, true
}

// put keeps root, the folder at path (its name in parent), opened by a
// walk that uses it until the function returned ends it, and returns the
// folder for the walk to go on in. When the folder kept at path is this
// same folder, under the same parent, put keeps that one, and the folders
// kept in it, and closes root: a walk to a folder not kept yet goes
// through folders kept already, and would otherwise make their folders
// under them (".history/facts" beside ".history/episodes") walk again at
// their next use. Where folders are not kept, or root's place cannot be
// known, the function closes root.
func (c *folders) put(parent *folder, path, name string, root *os.Root) (*folder, *os.Root, func()) {
	if c.top == nil {
		return nil, root, func() { root.Close() }
	}
	file, err := root.OpenFile(".", os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, root, func() { root.Close() }
	}
	at, ok := placeAt(file, "")
	if !ok {
		file.Close()
		return nil, root, func() { root.Close() }
	}
	c.mu.Lock()
	if old := c.m[path]; old != nil && old.parent == parent && old.at == at {
		// The walk just opened old's folder, in its place under parent.
		old.refs++
		c.mu.Unlock()
		file.Close()
		root.Close()
		return old, old.root, func() { c.release(old) }
	}
	f := &folder{path: path, name: name, parent: parent, root: root, file: file, at: at, refs: 1}
	if c.closed || parent != nil && parent.gone {
		f.gone = true
	} else {
		if c.m == nil || len(c.m) >= maxFolders {
			for _, old := range c.m {
				c.forgetLocked(old)
			}
			c.m, c.byRoot = map[string]*folder{}, map[*os.Root]*folder{}
		}
		if old := c.m[path]; old != nil {
			c.forgetLocked(old)
		}
		c.m[path], c.byRoot[root] = f, f
	}
	c.mu.Unlock()
	return f, root, func() { c.release(f) }
}

// forget forgets f, and closes it when no operation uses it.
func (c *folders) forget(f *folder) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.forgetLocked(f)
}

func (c *folders) forgetLocked(f *folder) {
	if f.gone {
		return
	}
	f.gone = true
	if c.m[f.path] == f {
		delete(c.m, f.path)
	}
	delete(c.byRoot, f.root)
	if f.refs == 0 {
		f.close()
	}
}

// close closes f's files.
func (f *folder) close() {
	f.file.Close()
	f.root.Close()
}

// file returns the folder root opened as a file, to fsync it, with the
// function that ends its use: the file kept with the folder, when the Dir
// keeps root and the caller uses it, else opened now.
func (c *folders) file(root *os.Root) (*os.File, func(), error) {
	c.mu.Lock()
	if f := c.byRoot[root]; f != nil && f.refs > 0 {
		c.mu.Unlock()
		return f.file, func() {}, nil
	}
	c.mu.Unlock()
	file, err := root.OpenFile(".", os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, nil, err
	}
	return file, func() { file.Close() }, nil
}

// release ends an operation's use of f.
func (c *folders) release(f *folder) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f.refs--
	if f.refs == 0 && f.gone {
		f.close()
	}
}

// close forgets every folder: those in use are closed when released.
func (c *folders) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for _, f := range c.m {
		c.forgetLocked(f)
	}
	c.m, c.byRoot = nil, nil
}
