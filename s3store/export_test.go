package s3store

import "time"

// SetLeaseTTL sets the duration of the leases b takes.
func (b *Backend) SetLeaseTTL(d time.Duration) { b.ttl = d }

// Bare tells whether b sends If-Match ETags without their quotes.
func (b *Backend) Bare() bool { return b.bare.Load() }

// Exported for the tests of the package's decisions.
var (
	Classify     = classify
	LeaseTTLOf   = leaseTTL
	SameETag     = sameETag
	LeaseExpired = func(body []byte, modified, now time.Time) bool {
		return leaseExpired(object{data: body, modified: modified, now: now})
	}
)

// Outcomes of Classify.
const (
	Failed    = failed
	Refused   = refused
	Uncertain = uncertain
)

// Outcome is what Classify says of an error.
type Outcome = outcome

// SetMaxList sets the files b's List returns at most.
func (b *Backend) SetMaxList(n int) { b.maxList = n }
