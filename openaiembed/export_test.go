package openaiembed

// SetLimit makes c read responses of at most n bytes.
func SetLimit(c *Client, n int64) { c.limit = n }
