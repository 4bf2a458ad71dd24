package textpack

// SetLimit makes d hold at most n tokens, so that a test can fill it.
func (d *Dict) SetLimit(n int) { d.limit = n }
