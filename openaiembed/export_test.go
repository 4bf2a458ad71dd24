package openaiembed

// SetLimit makes c read responses of at most n bytes.
func SetLimit(c *Client, n int64) { c.limit = n }

// MaxDimensions is the most numbers of a vector when no Dimensions are
// asked for.
const MaxDimensions = maxDimensions
