package s3store_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	memory "github.com/mdmemory/memory"
	"github.com/mdmemory/memory/backendtest"
)

// TestStoreSuite runs the Backend conformance suite on the S3 backend:
// each case on a fresh prefix of the gateway, with a client of its own,
// its objects deleted when it ends.
func TestStoreSuite(t *testing.T) {
	g := needGateway(t)
	backendtest.Run(t, func(t *testing.T) memory.Backend {
		e := &env{t: t, gw: g, client: newClient(g.endpoint, nil), prefix: newPrefix(t)}
		t.Cleanup(func() { deletePrefix(t, e) })
		return e.backend(nil)
	})
}

// deletePrefix deletes every object under e's prefix, leases included.
func deletePrefix(t *testing.T, e *env) {
	ctx := context.Background()
	p := s3.NewListObjectsV2Paginator(e.client, &s3.ListObjectsV2Input{Bucket: aws.String(testBucket), Prefix: aws.String(e.prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Errorf("cleaning %s up: %v", e.prefix, err)
			return
		}
		for _, o := range page.Contents {
			if _, err := e.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(testBucket), Key: o.Key}); err != nil {
				t.Errorf("cleaning %s up: %v", e.prefix, err)
				return
			}
		}
	}
}
