package ui

import (
	"bytes"
	"context"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestForget(t *testing.T) {
	p := newPage(t, nil)
	ctx := context.Background()
	const text = "sister Beth's stay at the Leeds clinic"
	first, err := p.s.Read(ctx, "facts/user.md")
	must(t, err)
	must(t, p.s.Write(ctx, "facts/user.md", first+"- Family: "+text+"\n"))
	must(t, p.s.Write(ctx, "facts/user.md", first+"- Family: "+text+"\n- Tea: longjing\n"))
	status, body := p.get("/history?path=facts/user.md")
	if status != http.StatusOK || !strings.Contains(body, `action="/forget"`) {
		t.Fatalf("history: %d, no form to forget\n%s", status, body)
	}

	// Where it is, first: the file now and the version before.
	form := url.Values{"path": {"facts/user.md"}, "text": {text}, "preview": {"1"}}
	status, body, _ = p.post("/forget", form)
	if status != http.StatusOK || strings.Count(body, "<td><code>facts/user.md</code></td>") != 2 || !strings.Contains(body, "Forget it everywhere") {
		t.Fatalf("where it is: %d\n%s", status, body)
	}
	if b, _ := os.ReadFile(filepath.Join(p.dir, "facts/user.md")); !bytes.Contains(b, []byte(text)) {
		t.Fatal("showing where it is changed the file")
	}

	form.Del("preview")
	status, _, resp := p.post("/forget", form)
	if status != http.StatusSeeOther {
		t.Fatalf("forget: %d", status)
	}
	err = filepath.WalkDir(p.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if b, err := os.ReadFile(path); err != nil || bytes.Contains(b, []byte(text)) {
			t.Errorf("%s still holds the text (%v)", path, err)
		}
		return nil
	})
	must(t, err)
	_, body = p.get(resp.Header.Get("Location"))
	if !strings.Contains(body, "Forgotten: the text is out of every file and every version the history keeps (2 places).") || !strings.Contains(body, ": forget</h2>") {
		t.Errorf("the history after forgetting:\n%s", body)
	}

	status, body, _ = p.post("/forget", url.Values{"path": {"facts/user.md"}, "text": {"tea"}})
	if status != http.StatusUnprocessableEntity || !strings.Contains(body, "Nothing was forgotten: the text to forget has 3 bytes") {
		t.Errorf("a text too short: %d\n%s", status, body)
	}
}
