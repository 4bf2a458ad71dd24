//go:build !amd64

package memory

// dot8 is dot8Go.
func dot8(a, b []int8) int32 { return dot8Go(a, b) }
