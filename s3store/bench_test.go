package s3store_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// benchSize is the size of a busy month's file as an episode append
// rewrites it.
const benchSize = 8 << 10

func benchData() []byte {
	return bytes.Repeat([]byte("- an episode's line of about sixty-four bytes, give or take.\n"), benchSize/61+1)[:benchSize]
}

// BenchmarkBare is the floor: the SDK's GetObject and conditional
// PutObject of an episode month's size, with nothing around them.
func BenchmarkBare(b *testing.B) {
	e := newEnv(b)
	ctx := context.Background()
	data := benchData()
	key := aws.String(e.key("episodes/2026-11.md"))
	out, err := e.client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(testBucket), Key: key, Body: bytes.NewReader(data)})
	if err != nil {
		b.Fatal(err)
	}
	etag := out.ETag
	b.Run("get", func(b *testing.B) {
		b.SetBytes(benchSize)
		for b.Loop() {
			o, err := e.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(testBucket), Key: key})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := io.Copy(io.Discard, o.Body); err != nil {
				b.Fatal(err)
			}
			o.Body.Close()
		}
	})
	b.Run("put-conditional", func(b *testing.B) {
		b.SetBytes(benchSize)
		for b.Loop() {
			o, err := e.client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(testBucket), Key: key, Body: bytes.NewReader(data), IfMatch: etag})
			if err != nil {
				b.Fatal(err)
			}
			etag = o.ETag
		}
	})
}

// BenchmarkBackend is the same through the Backend, and a listing of a
// year of months.
func BenchmarkBackend(b *testing.B) {
	e := newEnv(b)
	ctx := context.Background()
	be := e.backend(nil)
	data := benchData()
	v, err := put(ctx, be, "episodes/2026-11.md", data, "")
	if err != nil {
		b.Fatal(err)
	}
	for m := 1; m <= 10; m++ {
		if _, err := put(ctx, be, fmt.Sprintf("episodes/2026-%02d.md", m), data, ""); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("read", func(b *testing.B) {
		b.SetBytes(benchSize)
		for b.Loop() {
			if _, err := be.Read(ctx, "episodes/2026-11.md", -1); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("write", func(b *testing.B) {
		// The lock of a file makes no request: the write is its PUT.
		h, err := be.Lock(ctx, "episodes/2026-11.md")
		if err != nil {
			b.Fatal(err)
		}
		defer h.Unlock()
		b.SetBytes(benchSize)
		for b.Loop() {
			if v, err = h.Write(ctx, "episodes/2026-11.md", data, v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("list", func(b *testing.B) {
		for b.Loop() {
			entries, err := be.List(ctx, "episodes")
			if err != nil || len(entries) != 11 {
				b.Fatal(entries, err)
			}
		}
	})
	b.Run("lock-folder", func(b *testing.B) {
		for b.Loop() {
			h, err := be.Lock(ctx, "episodes/")
			if err != nil {
				b.Fatal(err)
			}
			h.Unlock()
		}
	})
}
