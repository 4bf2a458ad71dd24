package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/logging"

	"github.com/mdmemory/memory"
	"github.com/mdmemory/memory/internal/origin"
	"github.com/mdmemory/memory/s3store"
)

// storeFlags are the flags of every command: where the memory is, and the
// options of the program that uses it.
type storeFlags struct {
	dir         string
	facts       string
	factsBudget int
	world       string
	worldBudget int
}

// The library's defaults for the options the flags set, which it does not
// export: the help shows them, and ls measures sizes against them. A store
// opened with zero options reports the budgets in its Stats, and searches
// as many hits when not told; TestLibraryDefaults checks that they agree.
const (
	defaultFactsBudget = 15360 // bytes
	defaultWorldBudget = 15360 // bytes
	defaultSearchLimit = 10
)

// register declares the flags on fs, with their current values as
// defaults, so that flags given before the command carry over to it.
func (f *storeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.dir, "dir", f.dir, "the memory: a directory, or s3://BUCKET/PREFIX (default $"+dirEnv+", or "+defaultDir+")")
	fs.StringVar(&f.facts, "facts", f.facts, "the fact files, comma-separated, when the program using the memory configures others (default user.md,memory.md)")
	fs.IntVar(&f.factsBudget, "facts-budget", f.factsBudget, fmt.Sprintf("the facts budget in bytes, when the program using the memory sets another (default %d)", defaultFactsBudget))
	fs.StringVar(&f.world, "world", f.world, "the shared root of the world topics this memory shares with other agents (world/<topic>.md): a directory, or s3://BUCKET/PREFIX (default $"+worldEnv+"; none when empty)")
	fs.IntVar(&f.worldBudget, "world-budget", f.worldBudget, fmt.Sprintf("the world topics' budget in bytes, when the program using the memory sets another (default %d)", defaultWorldBudget))
}

// worldWhere is the shared world the flags and the environment name; ""
// for none.
func (f storeFlags) worldWhere(getenv func(string) string) string {
	return cmp.Or(f.world, getenv(worldEnv))
}

// where is the memory the flags and the environment name.
func (f storeFlags) where(getenv func(string) string) string {
	return cmp.Or(f.dir, getenv(dirEnv), defaultDir)
}

// options are the store's options as the flags give them.
func (f storeFlags) options() (memory.Options, error) {
	o := memory.Options{FactsBudget: f.factsBudget, WorldBudget: f.worldBudget}
	if f.factsBudget < 0 {
		return o, usageErr{"--facts-budget may not be negative"}
	}
	if f.worldBudget < 0 {
		return o, usageErr{"--world-budget may not be negative"}
	}
	if f.facts != "" {
		for name := range strings.SplitSeq(f.facts, ",") {
			o.FactFiles = append(o.FactFiles, memory.FactFile{Name: strings.TrimSpace(name)})
		}
	}
	return o, nil
}

// budget is the facts budget in effect.
func (f storeFlags) budget() int { return cmp.Or(f.factsBudget, defaultFactsBudget) }

// open opens the store, and the shared world when --world or $MDMEMORY_WORLD
// names one. A command that only reads (write false) needs directories that
// exist, and opens them with memory.OpenDir, which creates nothing but the
// lock file every Store uses (and removes the temporary files of a crashed
// writer), not the facts/ and episodes/ folders that memory.Open makes; a
// command that writes creates them, as memory.Open does. close releases
// what open opened.
func (e *env) open(ctx context.Context, write bool) (s *memory.Store, close func(), err error) {
	return e.openWith(ctx, write, &opener{getenv: e.getenv})
}

// openWith is open, with the backends opened by o.
func (e *env) openWith(ctx context.Context, write bool, o *opener) (s *memory.Store, close func(), err error) {
	opts, err := e.store.options()
	if err != nil {
		return nil, nil, err
	}
	opts.Embedder = e.embedder
	return openStore(ctx, e.store.where(e.getenv), e.store.worldWhere(e.getenv), opts, write, o)
}

// An opener opens backends: with the configuration of getenv, and for a
// server, each S3 backend on one client, observed.
type opener struct {
	getenv func(string) string

	// observe, when not nil, wraps each S3 backend opened, for a
	// server's metrics.
	observe func(memory.Backend) memory.Backend

	mu     sync.Mutex
	client *s3.Client // made by the first S3 backend, for all
}

// s3Client returns the opener's S3 client, made on first use.
func (o *opener) s3Client(ctx context.Context) (*s3.Client, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.client != nil {
		return o.client, nil
	}
	c, err := newS3Client(ctx, o.getenv)
	if err != nil {
		return nil, err
	}
	o.client = c
	return c, nil
}

// openStore opens the store at where with opts, and the shared world at
// world unless it is "", as env.open says.
func openStore(ctx context.Context, where, world string, opts memory.Options, write bool, o *opener) (s *memory.Store, close func(), err error) {
	var closers []func()
	closeAll := func() {
		for _, c := range slices.Backward(closers) {
			c()
		}
	}
	defer func() {
		if err != nil {
			closeAll()
		}
	}()
	if world != "" {
		b, closeWorld, err := openBackend(ctx, world, write, o, "give the shared world's directory with --world or $"+worldEnv)
		if err != nil {
			return nil, nil, fmt.Errorf("--world: %w", err)
		}
		closers = append(closers, closeWorld)
		opts.World = b
	}
	if write && !strings.HasPrefix(where, "s3://") {
		if s, err = memory.Open(where, &opts); err != nil {
			return nil, nil, err
		}
	} else {
		b, closeOwn, err := openBackend(ctx, where, write, o, "give the memory directory with --dir or $"+dirEnv)
		if err != nil {
			return nil, nil, err
		}
		closers = append(closers, closeOwn)
		if s, err = memory.OpenBackend(b, &opts); err != nil {
			return nil, nil, err
		}
	}
	closers = append(closers, func() { s.Close() })
	return s, closeAll, nil
}

// openBackend opens the backend at where: s3://BUCKET/PREFIX, or a
// directory, which must exist unless write is set; hint says how to name
// another.
func openBackend(ctx context.Context, where string, write bool, o *opener, hint string) (memory.Backend, func(), error) {
	if rest, ok := strings.CutPrefix(where, "s3://"); ok {
		var b memory.Backend
		s3b, err := openS3(ctx, rest, o)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", where, err)
		}
		b = s3b
		if o.observe != nil {
			b = o.observe(b)
		}
		if !write {
			// A prefix with no file is, to a command that reads, what a
			// missing directory is: most likely a typo.
			files, err := b.List(ctx, "")
			switch {
			case err != nil:
				return nil, nil, fmt.Errorf("%s: %w", where, err)
			case len(files) == 0:
				return nil, nil, fmt.Errorf("%s holds no memory (no file under that prefix): %s%w", where, hint, errNoMemory)
			}
		}
		return b, func() {}, nil
	}
	if !write {
		switch fi, err := os.Stat(where); {
		case errors.Is(err, fs.ErrNotExist):
			return nil, nil, fmt.Errorf("%s does not exist: %s%w", where, hint, errNoMemory)
		case err != nil:
			return nil, nil, err
		case !fi.IsDir():
			return nil, nil, fmt.Errorf("%s is not a directory", where)
		}
	}
	d, err := memory.OpenDir(where, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("open %s: %w", where, err)
	}
	return d, func() { d.Close() }, nil
}

// errNoMemory marks, wrapped, the error of a command that reads when the
// memory is not there: a directory that does not exist, a prefix with no
// file. It adds nothing to the message.
var errNoMemory = noMemory{}

type noMemory struct{}

func (noMemory) Error() string { return "" }

// errNoCredentials is openS3's error when the SDK finds no credentials.
var errNoCredentials = errors.New(`no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE) in mdmemory's environment; an MCP client passes the server only the variables of the "env" block in its configuration`)

// openS3 opens the S3 backend of "BUCKET/PREFIX", on the opener's client.
func openS3(ctx context.Context, bucketPrefix string, o *opener) (*s3store.Backend, error) {
	bucket, prefix, _ := strings.Cut(bucketPrefix, "/")
	if bucket == "" {
		return nil, errors.New("no bucket: write s3://BUCKET/PREFIX")
	}
	client, err := o.s3Client(ctx)
	if err != nil {
		return nil, err
	}
	return s3store.New(client, bucket, prefix)
}

// newS3Client makes an S3 client configured as the AWS SDK configures
// itself from the environment and shared files. The region
// defaults to us-east-1, as most S3-compatible servers expect. When the
// endpoint is another server's (AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_S3, or a
// profile's endpoint_url), requests use path-style addressing
// (http://host/bucket/key), which such servers take, and not virtual-hosted
// bucket names.
func newS3Client(ctx context.Context, getenv func(string) string) (*s3.Client, error) {
	// The SDK logs nothing: what goes wrong comes back as an error, said
	// in one line.
	cfg, err := config.LoadDefaultConfig(ctx, config.WithLogger(logging.Nop{}), config.WithClientLogMode(0))
	if err != nil {
		return nil, fmt.Errorf("AWS configuration: %w", err)
	}
	// Credentials are found before the first request, so that none found
	// is said as such, and not as the last source the SDK tried (the EC2
	// instance's role, which few machines have).
	if cfg.Credentials == nil {
		return nil, errNoCredentials
	}
	if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, errNoCredentials
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	pathStyle := cfg.BaseEndpoint != nil || getenv("AWS_ENDPOINT_URL_S3") != ""
	return s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.UsePathStyle = pathStyle
		if bc, ok := o.HTTPClient.(*awshttp.BuildableClient); ok {
			o.HTTPClient = &http.Client{Transport: bc.GetTransport(), Timeout: bc.GetTimeout(), CheckRedirect: sameOriginRedirect}
		}
	}), nil
}

// sameOriginRedirect is the S3 client's CheckRedirect. The SDK's own
// follows a 307 or 308 to any address; Go's client then drops the
// Authorization header for another host, but keeps it for the same host
// under another scheme or port, so that a signed request (its key's id,
// its signature, and a PUT's content) would go to whatever listens there.
// This follows a 307 or 308 within the scheme, host and port of the
// request alone, and answers the SDK with any other redirect as it is, as
// the SDK's does with a 301 or 302: an error that names it.
func sameOriginRedirect(req *http.Request, via []*http.Request) error {
	first := via[0].URL
	switch {
	case req.Response == nil || (req.Response.StatusCode != http.StatusTemporaryRedirect && req.Response.StatusCode != http.StatusPermanentRedirect),
		!origin.Same(req.URL, first),
		len(via) >= 10:
		return http.ErrUseLastResponse
	}
	return nil
}
