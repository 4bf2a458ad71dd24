package memory

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"

	"github.com/mdmemory/memory/internal/markdown"
)

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

// cutShort reports whether c is only the start of its file.
func cutShort(c Content) bool { return c.Size > int64(len(c.Data)) }

// readContent reads a target, at most readLimit bytes of it, or takes
// it from what the Store made when it is still so (known). A missing file
// gives Data nil and no error.
func (s *Store) readContent(ctx context.Context, op string, t target) (Content, error) {
	if c, ok := s.known(t.path); ok {
		return c, nil
	}
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

// known returns the content of the file at p without reading it, when the
// Store made it (docCache) and the backend tells the file is still at the
// version it left it (stamper).
func (s *Store) known(p string) (Content, bool) {
	d, v := s.docs.current(p)
	if d == nil {
		return Content{}, false
	}
	if st, ok := s.b.(stamper); !ok || !st.unchanged(p, v) {
		return Content{}, false
	}
	src := d.Src()
	return Content{Data: src[:len(src):len(src)], Size: int64(len(src)), Version: v}, true
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
