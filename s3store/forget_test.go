package s3store_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	memory "github.com/mdmemory/memory"
)

// TestForgetLeavesNoObject forgets a text from a store on a prefix, and
// reads back every object under the prefix, as the S3 API lists them
// (leases and the cache of vectors included), and every file the gateway
// keeps for them: none holds a byte of it.
func TestForgetLeavesNoObject(t *testing.T) {
	g := needGateway(t)
	e := &env{t: t, gw: g, client: newClient(g.endpoint, nil), prefix: newPrefix(t)}
	t.Cleanup(func() { deletePrefix(t, e) })
	const text = "sister Beth's stay at the Leeds clinic"
	ctx := context.Background()
	s := openStore(t, e.backend(nil))
	if err := s.Write(ctx, "facts/user.md", "# User\n\n> Summary: who\n\n- Family: "+text+"\n"); err != nil {
		t.Fatal(err)
	}
	for _, entry := range []string{"## Call\nAbout " + text + ".", "## Walk\nBy the river."} {
		if err := s.Append(ctx, "episodes/2026-02.md", entry, ""); err != nil {
			t.Fatal(err)
		}
	}
	rawPut(e, "facts/memory.md", "# Memory\n\n> Summary: know-how\n\n- Clinic: "+text+"\n") // a person's `aws s3 cp`
	if err := s.Write(ctx, "facts/user.md", "# User\n\n> Summary: who\n\n- Family: fine\n"); err != nil {
		t.Fatal(err)
	}
	if held := e.holding(text); len(held) == 0 {
		t.Fatal("no object holds the text before Forget")
	}
	n, err := s.Forget(ctx, text)
	if err != nil || n < 4 {
		t.Fatalf("Forget: %d, %v", n, err)
	}
	if held := e.holding(text); len(held) > 0 {
		t.Fatalf("after Forget, %v hold the text", held)
	}
	changes, err := s.History(ctx, "facts/user.md", nil)
	if err != nil || len(changes) != 2 || !changes[1].Redacted {
		t.Fatalf("History: %+v, %v", changes, err)
	}
	if got, err := s.ReadVersion(ctx, "facts/user.md", changes[1].New); err != nil || strings.Contains(got, "Leeds") {
		t.Fatalf("the version that held it: %q, %v", got, err)
	}
}

// holding returns the objects under e's prefix, and the gateway's files
// under its folder, that hold text.
func (e *env) holding(text string) []string {
	e.t.Helper()
	ctx := context.Background()
	var held []string
	p := s3.NewListObjectsV2Paginator(e.client, &s3.ListObjectsV2Input{Bucket: aws.String(testBucket), Prefix: aws.String(e.prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			e.t.Fatal(err)
		}
		for _, o := range page.Contents {
			out, err := e.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(testBucket), Key: o.Key})
			if err != nil {
				e.t.Fatal(err)
			}
			data, err := io.ReadAll(out.Body)
			out.Body.Close()
			if err != nil {
				e.t.Fatal(err)
			}
			if bytes.Contains(data, []byte(text)) {
				held = append(held, aws.ToString(o.Key))
			}
		}
	}
	root := e.path("")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err == nil && bytes.Contains(data, []byte(text)) {
			held = append(held, "gateway file "+path)
		}
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return held
}

// TestForgetSegments forgets a text that every segment of a log holds:
// the segments are rewritten, the log's summary of their sizes goes, and
// the history reads on, with the changes after it recorded.
func TestForgetSegments(t *testing.T) {
	g := needGateway(t)
	e := &env{t: t, gw: g, client: newClient(g.endpoint, nil), prefix: newPrefix(t)}
	t.Cleanup(func() { deletePrefix(t, e) })
	const text = "sister Beth's stay at the Leeds clinic"
	ctx := context.Background()
	s := openStore(t, e.backend(nil))
	filler := strings.Repeat("- Note: a line of know-how that fills the file\n", 180)
	for i := range 120 {
		content := fmt.Sprintf("# Memory\n\n> Summary: know-how\n\n- Family: %s\n- Count: %d\n%s", text, i, filler)
		if err := s.Write(ctx, "facts/memory.md", content); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := rawGet(e, ".history/facts/memory.md/00000002.log"); !ok {
		t.Fatal("the log is one segment")
	}
	if _, ok := rawGet(e, ".history/facts/memory.md/.last"); !ok {
		t.Fatal("the log has no summary")
	}
	if _, err := s.Forget(ctx, text); err != nil {
		t.Fatal(err)
	}
	if held := e.holding(text); len(held) > 0 {
		t.Fatalf("after Forget, %v hold the text", held)
	}
	if _, ok := rawGet(e, ".history/facts/memory.md/.last"); ok {
		t.Error("the summary of the segments' sizes before Forget is still there")
	}
	if err := s.Write(ctx, "facts/memory.md", "# Memory\n\n> Summary: know-how\n\n- Count: done\n"); err != nil {
		t.Fatal(err)
	}
	for _, st := range []*memory.Store{s, openStore(t, e.backend(nil))} {
		changes, err := st.History(ctx, "facts/memory.md", nil)
		if err != nil || len(changes) != 122 || changes[0].Op != "write" || changes[1].Op != "forget" {
			t.Fatalf("History: %d changes, %v", len(changes), err)
		}
		for _, c := range changes {
			if got, err := st.ReadVersion(ctx, "facts/memory.md", c.New); err != nil || strings.Contains(got, "Leeds") {
				t.Fatalf("version %s: %v", c.New, err)
			}
		}
	}
}
