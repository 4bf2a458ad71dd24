package memory

// dot8 is dot8Go with SSE2 instructions (every amd64 processor has them)
// for each 16 numbers, and Go for the rest.
func dot8(a, b []int8) int32 {
	b = b[:len(a)]
	n := len(a) &^ 15
	var s int32
	if n > 0 {
		s = dot8SSE2(&a[0], &b[0], n)
	}
	for i := n; i < len(a); i++ {
		s += int32(a[i]) * int32(b[i])
	}
	return s
}

// dot8SSE2 is the dot product of the n numbers at a and at b; n is a
// multiple of 16.
//
//go:noescape
func dot8SSE2(a, b *int8, n int) int32
