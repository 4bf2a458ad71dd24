package mcpserver

import (
	"runtime/debug"
	"strings"
)

// modulePath is this module's path.
const modulePath = "github.com/mdmemory/memory/mcpserver"

// Version returns the version the running binary was built at, as the
// server reports it in the MCP handshake by default (Options.Version) and
// `mdmemory version` prints it:
//
//   - the main module's version, when the Go command stamped one: a
//     release ("v1.2.0", for go install ...@v1.2.0) or a pseudo-version
//     naming the commit (go build in a clone, with Go 1.24 or later);
//   - else the version of this module among the binary's dependencies,
//     unless it is the placeholder of a replace directive
//     (v0.0.0-00010101000000-000000000000), which names no version;
//   - else "devel", followed by "+" and the first 12 digits of the commit
//     the binary was built from when the build recorded it (vcs.revision),
//     and ".dirty" when the work tree had changes: "devel+0123456789ab".
//
// It never fails: a binary without build information is "devel".
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	return versionOf(bi)
}

// versionOf is Version for the build information bi.
func versionOf(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	for _, d := range bi.Deps {
		if d.Path != modulePath {
			continue
		}
		if d.Replace != nil && d.Replace.Version != "" {
			d = d.Replace
		}
		if v := d.Version; v != "" && v != "(devel)" && !strings.HasPrefix(v, "v0.0.0-00010101000000-") {
			return v
		}
	}
	v := "devel"
	var rev string
	var dirty bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev != "" {
		v += "+" + rev[:min(12, len(rev))]
		if dirty {
			v += ".dirty"
		}
	}
	return v
}
