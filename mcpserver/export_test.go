package mcpserver

// SetEnded makes the server built with o call f with a conversation's id
// once the conversation ended with its MCP session.
func SetEnded(o *Options, f func(id string)) { o.ended = f }

// VersionOf is versionOf.
var VersionOf = versionOf
