package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/build"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/require"

	"github.com/mdmemory/memory"
	"github.com/mdmemory/memory/s3store"
)

// The S3 tests run mdmemory against versitygw, an S3 gateway over a local
// folder, on loopback, as the s3store module's tests do. Without it they
// skip.
const (
	versitygwEnv = "MDMEMORY_VERSITYGW" // exactly this binary, if set
	testBucket   = "mdmemory-cli-test"
	accessKey    = "mdmemorytest"
	secretKey    = "mdmemorytestsecret"
)

var (
	gwOnce     sync.Once
	gwEndpoint string
	gwCmd      *exec.Cmd
	gwDone     chan struct{}
	gwRoot     string
	gwErr      error
	gwMissing  bool
)

// needGateway starts versitygw on first use and returns its endpoint; it
// skips t when versitygw is not installed.
func needGateway(t *testing.T) string {
	t.Helper()
	gwOnce.Do(startGateway)
	if gwMissing {
		t.Skipf("needs versitygw (%v): make s3-tools installs it (go install github.com/versity/versitygw/cmd/versitygw@v1.8.0)", gwErr)
	}
	require.NoError(t, gwErr, "versitygw")
	return gwEndpoint
}

func findVersitygw() (string, error) {
	if p, ok := os.LookupEnv(versitygwEnv); ok {
		return p, nil
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p, nil
	}
	var dirs []string
	if out, err := exec.Command("go", "env", "GOBIN", "GOPATH").Output(); err == nil {
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) == 2 && lines[0] != "" {
			dirs = append(dirs, lines[0])
		}
		for _, p := range filepath.SplitList(lines[len(lines)-1]) {
			dirs = append(dirs, filepath.Join(p, "bin"))
		}
	}
	for _, p := range filepath.SplitList(build.Default.GOPATH) {
		dirs = append(dirs, filepath.Join(p, "bin"))
	}
	for _, d := range dirs {
		p := filepath.Join(d, "versitygw")
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	return "", errors.New("versitygw not found on PATH nor in $(go env GOPATH)/bin")
}

func startGateway() {
	bin, err := findVersitygw()
	if err != nil {
		gwMissing, gwErr = true, err
		return
	}
	if gwRoot, gwErr = os.MkdirTemp("", "mdmemory-cli-s3-*"); gwErr != nil {
		return
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		gwErr = err
		return
	}
	addr := l.Addr().String()
	l.Close()
	gwEndpoint = "http://" + addr
	data := filepath.Join(gwRoot, "data")
	if gwErr = os.MkdirAll(data, 0o755); gwErr != nil {
		return
	}
	logf, err := os.Create(filepath.Join(gwRoot, "versitygw.log"))
	if err != nil {
		gwErr = err
		return
	}
	defer logf.Close()
	gwCmd = exec.Command(bin, "--port", addr, "--access", accessKey, "--secret", secretKey, "--quiet", "posix", data)
	gwCmd.Stdout, gwCmd.Stderr = logf, logf
	if gwErr = gwCmd.Start(); gwErr != nil {
		gwCmd = nil
		return
	}
	gwDone = make(chan struct{})
	go func() { gwCmd.Wait(); close(gwDone) }()
	c := testClient()
	// The one wait on time in these tests: for the process to listen.
	wait := 10 * time.Millisecond
	for range 60 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err = c.ListBuckets(ctx, &s3.ListBucketsInput{}, func(o *s3.Options) { o.Retryer = aws.NopRetryer{} })
		cancel()
		if err == nil {
			break
		}
		select {
		case <-gwDone:
			out, _ := os.ReadFile(logf.Name())
			gwErr = fmt.Errorf("versitygw on %s exited: %s", addr, out)
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, 200*time.Millisecond)
	}
	if err != nil {
		gwErr = fmt.Errorf("versitygw on %s not ready: %w", addr, err)
		return
	}
	_, gwErr = c.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(testBucket)})
}

// stopGateway ends versitygw, if a test started it, and removes its folder.
func stopGateway() {
	if gwCmd != nil {
		gwCmd.Process.Kill()
		<-gwDone
	}
	if gwRoot != "" {
		os.RemoveAll(gwRoot)
	}
}

// testClient is the tests' own S3 client of the gateway, as a person's
// `aws s3` would be.
func testClient() *s3.Client {
	return s3.NewFromConfig(aws.Config{
		Region: "us-east-1",
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: accessKey, SecretAccessKey: secretKey}, nil
		}),
	}, func(o *s3.Options) {
		o.BaseEndpoint = aws.String(gwEndpoint)
		o.UsePathStyle = true
	})
}

// awsEnv points the AWS SDK's configuration from the environment at the
// gateway, and away from any configuration of the machine's user.
func awsEnv(t *testing.T) {
	none := filepath.Join(t.TempDir(), "none")
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL":            gwEndpoint,
		"AWS_ACCESS_KEY_ID":           accessKey,
		"AWS_SECRET_ACCESS_KEY":       secretKey,
		"AWS_SESSION_TOKEN":           "",
		"AWS_REGION":                  "us-east-1",
		"AWS_PROFILE":                 "",
		"AWS_CONFIG_FILE":             none,
		"AWS_SHARED_CREDENTIALS_FILE": none,
		"AWS_EC2_METADATA_DISABLED":   "true",
		"AWS_ENDPOINT_URL_S3":         "",
	} {
		t.Setenv(k, v)
	}
}

// keys lists every key under prefix, with its ETag.
func keys(t *testing.T, c *s3.Client, prefix string) map[string]string {
	t.Helper()
	out, err := c.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String(testBucket), Prefix: aws.String(prefix)})
	require.NoError(t, err)
	m := map[string]string{}
	for _, o := range out.Contents {
		m[aws.ToString(o.Key)] = aws.ToString(o.ETag)
	}
	return m
}

// TestS3: ls, show, search, stats and check read a memory under an S3
// prefix through the SDK's configuration from the environment, and write
// nothing there.
func TestS3(t *testing.T) {
	needGateway(t)
	awsEnv(t)
	ctx := context.Background()
	c := testClient()
	prefix := "people/" + strings.ReplaceAll(t.Name(), "/", "_") + "/"

	b, err := s3store.New(c, testBucket, prefix)
	require.NoError(t, err)
	s, err := memory.OpenBackend(b, &memory.Options{Now: feb26})
	require.NoError(t, err)
	require.NoError(t, s.Write(ctx, "facts/user.md", sampleUser))
	require.NoError(t, s.Append(ctx, "episodes/2026-02.md", sampleFeb, ""))
	require.NoError(t, s.Close())

	where := "s3://" + testBucket + "/" + strings.TrimSuffix(prefix, "/")
	env := map[string]string{dirEnv: where}
	before := keys(t, c, prefix)

	out := mdm(t, env, "ls").ok(t)
	require.Regexp(t, `facts/user\.md +\d+  Jianjun, prefers Chinese\n`, out)
	require.Regexp(t, `episodes/2026-02\.md +\d+  Tokyo flight research\n`, out)
	userMD, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(testBucket), Key: aws.String(prefix + "facts/user.md")})
	require.NoError(t, err)
	want, err := io.ReadAll(userMD.Body)
	userMD.Body.Close()
	require.NoError(t, err)
	require.Equal(t, string(want), mdm(t, env, "show", "facts/user.md").ok(t))
	require.Equal(t, "episodes/2026-02.md:5  2026-02-26  Tokyo flight research\n    Summary: Spring Airlines cheapest for April Tokyo trip\n", mdm(t, env, "search", "tokyo").ok(t))
	var st memory.Stats
	require.NoError(t, json.Unmarshal([]byte(mdm(t, env, "stats", "--json").ok(t)), &st))
	require.Equal(t, 2, st.Files)
	require.Equal(t, "No problems found.\n", mdm(t, env, "check").ok(t))
	require.Equal(t, before, keys(t, c, prefix), "the reading commands wrote nothing, not even a lease")

	// A person's hand-made files, put with `aws s3 cp`.
	for key, body := range map[string]string{
		"facts/notes.md":      "# Notes\n\n> Summary: x\n",
		"episodes/2026-13.md": "# 2026-13 Episodes\n",
	} {
		_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(testBucket), Key: aws.String(prefix + key), Body: strings.NewReader(body)})
		require.NoError(t, err)
	}
	before = keys(t, c, prefix)
	r := mdm(t, env, "check")
	require.Equal(t, 1, r.code, r.stderr)
	require.Equal(t, []string{"episodes/2026-13.md:", "facts/notes.md:"}, firstFields(r.stdout[:strings.LastIndex(r.stdout, "\n\n")+1]))
	for _, args := range [][]string{{"ls", "--json"}, {"search"}, {"context", "tokyo"}, {"stats"}, {"log"}, {"log", "--json", "facts/user.md"}} {
		mdm(t, env, args...).ok(t)
	}
	require.Equal(t, before, keys(t, c, prefix), "the reading commands wrote nothing, not even a lease")

	// The --dir flag takes the URL too; a URL without a bucket, or a
	// bucket that does not exist, fail.
	require.Contains(t, mdm(t, nil, "ls", "--dir", where).ok(t), "facts/user.md")
	require.Equal(t, "mdmemory: s3://: no bucket: write s3://BUCKET/PREFIX\n", mdm(t, nil, "ls", "--dir", "s3://").failed(t))
	require.Contains(t, mdm(t, nil, "ls", "--dir", "s3://no-such-bucket-here/x").failed(t), "NoSuchBucket")
}

// TestS3Newcomer: what a newcomer to S3 meets: a prefix with no memory is
// an error for a command that reads, as a missing directory is; missing
// credentials are one line, with no SDK log line; and the writing
// commands work on a prefix as on a directory.
func TestS3Newcomer(t *testing.T) {
	needGateway(t)
	awsEnv(t)
	c := testClient()
	prefix := "people/" + strings.ReplaceAll(t.Name(), "/", "_")
	where := "s3://" + testBucket + "/" + prefix
	env := map[string]string{dirEnv: where}

	for _, args := range [][]string{{"ls"}, {"show", "facts/user.md"}, {"search", "x"}, {"check"}, {"stats"}} {
		msg := mdm(t, env, args...).failed(t)
		require.Equal(t, "mdmemory: "+where+" holds no memory (no file under that prefix): give the memory directory with --dir or $MDMEMORY_DIR\n", msg, "%q", args)
	}
	require.Empty(t, keys(t, c, prefix+"/"), "reading wrote nothing")

	// Writing commands make the memory under the prefix.
	mdm(t, env, "add", "facts/user.md", "- Name: Zhang San").ok(t)
	mdm(t, env, "add", "facts/user.md", "- City: Hangzhou").ok(t)
	require.Contains(t, mdm(t, env, "show", "facts/user.md").ok(t), "- Name: Zhang San\n- City: Hangzhou\n")

	// The history under the prefix, in .history/: log, diff and restore.
	var changes []jsonChange
	require.NoError(t, json.Unmarshal([]byte(mdm(t, env, "log", "--json", "facts/user.md").ok(t)), &changes))
	require.Len(t, changes, 2)
	require.Equal(t, "cli", changes[0].Actor)
	first := changes[1].New[:8]
	require.Contains(t, mdm(t, env, "diff", "facts/user.md", first).ok(t), "\n+- City: Hangzhou\n")
	require.Contains(t, mdm(t, env, "restore", "facts/user.md", first).ok(t), "Restored facts/user.md to version "+first)
	require.NotContains(t, mdm(t, env, "show", "facts/user.md").ok(t), "City")
	require.Contains(t, mdm(t, env, "log", "facts/user.md", "--limit", "1").ok(t), "  restore  facts/user.md  cli  ")
	logged := false
	for k := range keys(t, c, prefix+"/") {
		logged = logged || strings.HasPrefix(k, prefix+"/.history/facts/user.md")
	}
	require.True(t, logged, "the log is under the prefix's .history/")
	src := t.TempDir()
	put(t, src, "SOUL.md", "You are Pegasus.\n")
	put(t, src, "memory/2026-02-26.md", "## Tokyo\n- booked\n")
	require.Contains(t, mdm(t, env, "import", "openclaw", src, "--apply").ok(t), "2 imported, 0 left out.")
	require.Equal(t, "You are Pegasus.\n", mdm(t, env, "show", "persona.md").ok(t))
	require.Contains(t, mdm(t, env, "compact", "--before", "2026-03", "--dry-run").ok(t), "Would compact 1 month (2026-02)")

	// No credentials anywhere: one line, saying what to set and where.
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	r := mdm(t, env, "ls")
	require.Equal(t, 1, r.code)
	require.Equal(t, "mdmemory: "+where+": "+errNoCredentials.Error()+"\n", r.stderr)
	require.NotContains(t, r.stderr, "IMDS")
}

// TestS3NoSDKLog: the AWS SDK's own log lines (its WARN of a missing
// checksum, a retry) never reach standard error: mdmemory, as a process,
// prints one line for a failure.
func TestS3NoSDKLog(t *testing.T) {
	needGateway(t)
	awsEnv(t)
	cmd := exec.Command(os.Args[0], "ls", "--dir", "s3://"+testBucket+"/nothing-here")
	cmd.Env = append(os.Environ(), asMainEnv+"=1", "AWS_ACCESS_KEY_ID=", "AWS_SECRET_ACCESS_KEY=")
	out, err := cmd.CombinedOutput()
	require.Error(t, err)
	require.Equal(t, 1, strings.Count(string(out), "\n"), "%s", out)
	require.Contains(t, string(out), "no AWS credentials")
	require.NotContains(t, string(out), "WARN")
}
