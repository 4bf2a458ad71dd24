package mcpserver_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/mdmemory/memory/mcpserver"
)

// A UsersHandler keeps nothing of a user whose store it released: after
// each of many users made a request of 2026-07-28, and their stores were
// released, the handler holds under 16 KB a user (nothing but noise, in
// fact); an open store's cost is logged beside it.
func TestIdleUserMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("opens hundreds of stores")
	}
	const n = 300
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("u%04d", i)
	}
	users := newTestUsers(t, names...)
	h := mcpserver.UsersHandler(users, nil)
	srv := newHTTPServer(t, h)
	before := heap()
	for _, name := range names {
		resp, m := modernPost(t, srv.URL, "tools/call", "memory_list", map[string]any{"name": "memory_list", "arguments": map[string]any{}}, map[string]string{"Authorization": "Bearer token-of-" + name})
		if resp.StatusCode != http.StatusOK || m.Error != nil {
			t.Fatalf("%s: %d %+v", name, resp.StatusCode, m.Error)
		}
	}
	open := heap()
	for _, name := range names {
		mcpserver.AwaitUnused(h, name)
	}
	mcpserver.ReleaseIdle(h)
	if got := users.closedN.Load(); got != n {
		t.Fatalf("%d stores released of %d", got, n)
	}
	srv.CloseClientConnections()
	idle := heap()
	perIdle := (int64(idle) - int64(before)) / n
	t.Logf("%d users: %.1f KB a user with its store open, %.2f KB a user once released", n, float64(int64(open)-int64(before))/n/1024, float64(perIdle)/1024)
	if perIdle > 16<<10 {
		t.Errorf("%d bytes kept a user once its store was released, over 16 KB", perIdle)
	}
}
