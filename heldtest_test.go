package memory_test

import "github.com/mdmemory/memory/backendtest"

// The tests write and remove files as another client of the backend does,
// and hook the writes of the locks their backends give.
var (
	put  = backendtest.Put
	del  = backendtest.Remove
	hook = backendtest.Hook
)
