package s3store_test

import "github.com/mdmemory/memory/backendtest"

// The tests write and remove objects as another client of the bucket
// does, and hook the writes of the locks their backends give.
var (
	put  = backendtest.Put
	del  = backendtest.Remove
	hook = backendtest.Hook
)
