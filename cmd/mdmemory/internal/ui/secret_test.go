package ui

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mdmemory/memory/backendtest"
)

// TestSecretOnThePage: a save that adds a credential's value is refused in
// a person's words, the kind named, the value not shown back; the
// overview shows Check's finding of one a person put in a file.
func TestSecretOnThePage(t *testing.T) {
	key := backendtest.FakeKey(1)
	p := newPage(t, nil)
	if err := os.WriteFile(filepath.Join(p.dir, "facts", "memory.md"), []byte("# Memory\n\n> Summary: keys\n\n- Side project key: "+key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, body := p.get("/")
	if !strings.Contains(body, "holds an OpenAI API key") || strings.Contains(body, key) {
		t.Errorf("the overview does not show the finding, or shows the key:\n%s", body)
	}
	_, body = p.get("/facts")
	status, body, _ := p.post("/save", map[string][]string{"path": {"facts/user.md"}, "version": {field(t, body, "version")}, "mode": {"add"}, "text": {"- OpenAI key: " + key}})
	if status != http.StatusUnprocessableEntity || !strings.Contains(body, "holds a credential") || !strings.Contains(body, "an OpenAI API key") {
		t.Fatalf("a credential saved: %d\n%s", status, body)
	}
	if b, _ := os.ReadFile(filepath.Join(p.dir, "facts", "user.md")); strings.Contains(string(b), key) {
		t.Error("the credential was written")
	}
}
