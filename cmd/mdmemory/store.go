package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/mdmemory/memory"
	"github.com/mdmemory/memory/s3store"
)

// storeFlags are the flags of every command: where the memory is, and the
// options of the program that uses it.
type storeFlags struct {
	dir         string
	facts       string
	factsBudget int
}

// register declares the flags on fs, with their current values as
// defaults, so that flags given before the command carry over to it.
func (f *storeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.dir, "dir", f.dir, "the memory: a directory, or s3://BUCKET/PREFIX (default $"+dirEnv+", or "+defaultDir+")")
	fs.StringVar(&f.facts, "facts", f.facts, "the fact files, comma-separated, when the program using the memory configures others (default user.md,memory.md)")
	fs.IntVar(&f.factsBudget, "facts-budget", f.factsBudget, fmt.Sprintf("the facts budget in bytes, when the program using the memory sets another (default %d)", memory.DefaultFactsBudget))
}

// where is the memory the flags and the environment name.
func (f storeFlags) where(getenv func(string) string) string {
	return cmp.Or(f.dir, getenv(dirEnv), defaultDir)
}

// options are the store's options as the flags give them.
func (f storeFlags) options() (memory.Options, error) {
	o := memory.Options{FactsBudget: f.factsBudget}
	if f.factsBudget < 0 {
		return o, usageErr{"--facts-budget may not be negative"}
	}
	if f.facts != "" {
		for name := range strings.SplitSeq(f.facts, ",") {
			o.FactFiles = append(o.FactFiles, memory.FactFile{Name: strings.TrimSpace(name)})
		}
	}
	return o, nil
}

// budget is the facts budget in effect.
func (f storeFlags) budget() int { return cmp.Or(f.factsBudget, memory.DefaultFactsBudget) }

// open opens the store. A command that only reads (write false) needs a
// directory that exists, and opens it with memory.OpenDir, which creates
// nothing but the lock file every Store uses (and removes the temporary
// files of a crashed writer), not the facts/ and episodes/ folders that
// memory.Open makes; a command that writes creates the directory, as
// memory.Open does. close releases what open opened.
func (e *env) open(ctx context.Context, write bool) (s *memory.Store, close func(), err error) {
	where := e.store.where(e.getenv)
	opts, err := e.store.options()
	if err != nil {
		return nil, nil, err
	}
	if rest, ok := strings.CutPrefix(where, "s3://"); ok {
		b, err := openS3(ctx, rest, e.getenv)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", where, err)
		}
		s, err := memory.OpenBackend(b, &opts)
		if err != nil {
			return nil, nil, err
		}
		return s, func() { s.Close() }, nil
	}
	if write {
		s, err := memory.Open(where, &opts)
		if err != nil {
			return nil, nil, err
		}
		return s, func() { s.Close() }, nil
	}
	switch fi, err := os.Stat(where); {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil, fmt.Errorf("%s does not exist: give the memory directory with --dir or $%s", where, dirEnv)
	case err != nil:
		return nil, nil, err
	case !fi.IsDir():
		return nil, nil, fmt.Errorf("%s is not a directory", where)
	}
	d, err := memory.OpenDir(where)
	if err != nil {
		return nil, nil, fmt.Errorf("open %s: %w", where, err)
	}
	s, err = memory.OpenBackend(d, &opts)
	if err != nil {
		d.Close()
		return nil, nil, err
	}
	return s, func() { s.Close(); d.Close() }, nil
}

// openS3 opens the S3 backend of "BUCKET/PREFIX", configured as the AWS
// SDK configures itself from the environment and shared files. The region
// defaults to us-east-1, as most S3-compatible servers expect. When the
// endpoint is another server's (AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_S3, or a
// profile's endpoint_url), requests use path-style addressing
// (http://host/bucket/key), which such servers take, and not virtual-hosted
// bucket names.
func openS3(ctx context.Context, bucketPrefix string, getenv func(string) string) (*s3store.Backend, error) {
	bucket, prefix, _ := strings.Cut(bucketPrefix, "/")
	if bucket == "" {
		return nil, errors.New("no bucket: write s3://BUCKET/PREFIX")
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	pathStyle := cfg.BaseEndpoint != nil || getenv("AWS_ENDPOINT_URL_S3") != ""
	client := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = pathStyle })
	return s3store.New(client, bucket, prefix)
}
