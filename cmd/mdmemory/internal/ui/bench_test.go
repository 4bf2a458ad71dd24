package ui

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mdmemory/memory"
)

// BenchmarkPages renders every page for ten years of memory: 120 months of
// 100 entries (tenYears), with a fact file changed 30 times through the
// library so that History has diffs to show. The page is warmed first (the
// search index built, the months parsed, Check run), as mdmemory ui does
// when it starts; each page is then rendered whole, as a browser asks for
// it, through the handler with its checks. The target is under 50
// ms a page.
func BenchmarkPages(b *testing.B) {
	dir := b.TempDir()
	tenYears(b, dir)
	s, err := memory.Open(dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := memory.WithActor(context.Background(), "bench")
	text, err := s.Read(ctx, "facts/user.md")
	if err != nil {
		b.Fatal(err)
	}
	for i := range 30 {
		text = strings.Replace(text, fmt.Sprintf("- Fact %d:", i), fmt.Sprintf("- Fact %d (checked):", i), 1)
		if err := s.Write(ctx, "facts/user.md", text); err != nil {
			b.Fatal(err)
		}
	}
	page := New(s, nil)
	page.Warm(context.Background())
	cookie := session(b, page)
	for _, p := range []struct{ name, path string }{
		{"Overview", "/"},
		{"Facts", "/facts"},
		{"Timeline", "/timeline"},
		{"TimelineOldest", "/timeline?from=2016-03"},
		{"Entry", "/entry?path=episodes/2020-06.md&line=5"},
		{"Search", "/search?q=tokyo+flights"},
		{"SearchChinese", "/search?q=" + "%E8%80%81%E7%8E%8B"},
		{"History", "/history"},
		{"Compaction", "/compact"},
	} {
		b.Run(p.name, func(b *testing.B) {
			for b.Loop() {
				w := httptest.NewRecorder()
				r := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:7337"+cookie.Path+p.path, nil)
				r.AddCookie(cookie)
				page.ServeHTTP(w, r)
				if w.Code != http.StatusOK {
					b.Fatalf("%s: %d\n%s", p.path, w.Code, w.Body)
				}
			}
		})
	}
}

// session returns the cookie of a new session of page, logged in with its
// token in the address.
func session(tb testing.TB, page *Server) *http.Cookie {
	w := httptest.NewRecorder()
	page.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "http://127.0.0.1:7337/compact?token="+page.Token(), nil))
	c := w.Result().Cookies()
	if len(c) != 1 {
		tb.Fatalf("no session cookie: %v", c)
	}
	return c[0]
}
