package openaimem_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/mdmemory/memory"
	"github.com/mdmemory/memory/adapters/openaimem"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

// fakeAPI plays the OpenAI API on loopback: each request to
// /chat/completions or /responses gets the next scripted reply, and its body
// is kept.
type fakeAPI struct {
	mu      sync.Mutex
	replies []string
	bodies  []map[string]any
	paths   []string
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(r.Body)
	var body map[string]any
	if err == nil {
		err = json.Unmarshal(b, &body)
	}
	f.mu.Lock()
	f.bodies = append(f.bodies, body)
	f.paths = append(f.paths, r.URL.Path)
	var reply string
	if err == nil && len(f.replies) > 0 {
		reply, f.replies = f.replies[0], f.replies[1:]
	}
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if reply == "" {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"message":"the fake API has no reply for this request (body error: %v)","type":"invalid_request_error"}}`, err)
		return
	}
	io.WriteString(w, reply)
}

func (f *fakeAPI) body(t *testing.T, i int) map[string]any {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if i >= len(f.bodies) {
		t.Fatalf("the API got %d requests, want at least %d", len(f.bodies), i+1)
	}
	return f.bodies[i]
}

// newClient returns the SDK's client pointed at a fake API that will play
// replies.
func newClient(t *testing.T, replies ...string) (openai.Client, *fakeAPI) {
	t.Helper()
	api := &fakeAPI{replies: replies}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	client := openai.NewClient(
		option.WithBaseURL(srv.URL),
		option.WithAPIKey("test-key"),
		option.WithMaxRetries(0),
	)
	return client, api
}

type toolCall struct{ id, name, args string }

// chatToolCalls is a chat completion whose message calls tools.
func chatToolCalls(t *testing.T, calls ...toolCall) string {
	t.Helper()
	var tcs []map[string]any
	for _, c := range calls {
		if c.name == "custom:" {
			tcs = append(tcs, map[string]any{"id": c.id, "type": "custom", "custom": map[string]any{"name": "memory_sql", "input": c.args}})
			continue
		}
		tcs = append(tcs, map[string]any{"id": c.id, "type": "function", "function": map[string]any{"name": c.name, "arguments": c.args}})
	}
	return completion(t, map[string]any{"role": "assistant", "content": nil, "refusal": nil, "tool_calls": tcs}, "tool_calls")
}

// chatText is a chat completion whose message is a final text.
func chatText(t *testing.T, text string) string {
	return completion(t, map[string]any{"role": "assistant", "content": text, "refusal": nil}, "stop")
}

func completion(t *testing.T, msg map[string]any, finish string) string {
	t.Helper()
	return mustJSON(t, map[string]any{
		"id": "chatcmpl-test", "object": "chat.completion", "created": 1, "model": "gpt-test",
		"choices": []any{map[string]any{"index": 0, "finish_reason": finish, "logprobs": nil, "message": msg}},
	})
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func openStore(t *testing.T) (*memory.Store, string) {
	t.Helper()
	dir := t.TempDir()
	store, err := memory.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store, dir
}

func readFile(t *testing.T, dir, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(path)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// answer is the user's loop as the README shows it: the memory index as the
// first user message, then model calls and memory tool calls until the model
// answers in text. ownTool, when not nil, answers the calls to the program's
// own tools.
func answer(ctx context.Context, client openai.Client, store *memory.Store, input string, ownTool func(openai.ChatCompletionMessageToolCallUnion) string) (string, error) {
	conv := store.NewSession()
	index, err := conv.IndexMessage(ctx)
	if err != nil {
		return "", err
	}
	params := openai.ChatCompletionNewParams{
		Model:    "gpt-test",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(index), openai.UserMessage(input)},
		Tools:    openaimem.Tools(conv),
	}
	for range 10 {
		completion, err := client.Chat.Completions.New(ctx, params)
		if err != nil {
			return "", err
		}
		msg := completion.Choices[0].Message
		if len(msg.ToolCalls) == 0 {
			return msg.Content, nil
		}
		params.Messages = append(params.Messages, msg.ToParam())
		answers, err := openaimem.Dispatch(ctx, conv, msg)
		if err != nil {
			return "", err
		}
		params.Messages = append(params.Messages, answers...)
		for _, tc := range msg.ToolCalls {
			if ownTool != nil && (tc.Type == "custom" || !openaimem.IsMemoryTool(tc.Function.Name)) {
				params.Messages = append(params.Messages, openai.ToolMessage(ownTool(tc), tc.ID))
			}
		}
	}
	return "", errors.New("no answer after 10 model calls")
}

const userFile = "# User\n\n> Summary: Ada, a pilot\n\n- Name: Ada\n- Job: pilot\n"

// messages returns a request body's messages.
func messages(t *testing.T, body map[string]any) []map[string]any {
	t.Helper()
	raw, _ := body["messages"].([]any)
	var out []map[string]any
	for _, m := range raw {
		mm, _ := m.(map[string]any)
		out = append(out, mm)
	}
	return out
}

// TestChatLoop runs the README's loop against the SDK's real client: the
// request carries the six memory tools as strict functions with the library's
// schemas and the index as a user message; the model's memory_write is done
// on disk; the next request carries the assistant's call and the tool message
// that answers it.
func TestChatLoop(t *testing.T) {
	store, dir := openStore(t)
	if err := store.Write(context.Background(), "facts/memory.md", "# Memory\n\n> Summary: book flights early\n\n- Book flights early.\n"); err != nil {
		t.Fatal(err)
	}
	client, api := newClient(t,
		chatToolCalls(t, toolCall{"call_1", "memory_write", mustJSON(t, map[string]any{"path": "facts/user.md", "content": userFile, "version": nil})}),
		chatText(t, "Noted: you are Ada."),
	)
	got, err := answer(context.Background(), client, store, "I'm Ada, a pilot.", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got != "Noted: you are Ada." {
		t.Errorf("answer %q", got)
	}
	if got := readFile(t, dir, "facts/user.md"); got != userFile {
		t.Errorf("facts/user.md is\n%s\nwant\n%s", got, userFile)
	}

	first := api.body(t, 0)
	lib := store.NewSession().Tools()
	tools, _ := first["tools"].([]any)
	if len(tools) != len(lib) {
		t.Fatalf("the request has %d tools, want %d", len(tools), len(lib))
	}
	for i, want := range lib {
		tool, _ := tools[i].(map[string]any)
		fn, _ := tool["function"].(map[string]any)
		if tool["type"] != "function" || fn["name"] != want.Name || fn["description"] != want.Description || fn["strict"] != true {
			t.Errorf("tool %d is %v, want the strict function %s", i, tool, want.Name)
		}
		if !reflect.DeepEqual(fn["parameters"], want.SchemaMap()) {
			t.Errorf("%s: parameters %v, want the library's %v", want.Name, fn["parameters"], want.SchemaMap())
		}
	}
	msgs := messages(t, first)
	if len(msgs) != 2 || msgs[0]["role"] != "user" || !strings.Contains(fmt.Sprint(msgs[0]["content"]), "facts/memory.md") {
		t.Errorf("the first request's messages are %v, want the index, then the input", msgs)
	}

	msgs = messages(t, api.body(t, 1))
	if len(msgs) != 4 {
		t.Fatalf("the second request has %d messages, want 4: %v", len(msgs), msgs)
	}
	calls, _ := msgs[2]["tool_calls"].([]any)
	if msgs[2]["role"] != "assistant" || len(calls) != 1 {
		t.Errorf("message 3 is %v, want the assistant's call", msgs[2])
	}
	content, _ := msgs[3]["content"].(string)
	if msgs[3]["role"] != "tool" || msgs[3]["tool_call_id"] != "call_1" || !strings.HasPrefix(content, `{"path":"facts/user.md"`) {
		t.Errorf("message 4 is %v, want the tool message answering call_1 with the write's result", msgs[3])
	}
}

// TestDispatchOrderAndOtherTools: Dispatch answers the memory calls of a
// message in their order, runs them in that order (a read, then a write
// relying on it), answers a made-up memory_ name with an error, and leaves
// the program's own tools and custom tool calls to the program; every call
// is answered once in the next request.
func TestDispatchOrderAndOtherTools(t *testing.T) {
	store, dir := openStore(t)
	if err := store.Write(context.Background(), "facts/user.md", userFile); err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(userFile, "pilot\n", "captain\n", 1)
	client, api := newClient(t,
		chatToolCalls(t,
			toolCall{"call_read", "memory_read", `{"path":"facts/user.md","line":null}`},
			toolCall{"call_weather", "get_weather", `{"city":"Oslo"}`},
			toolCall{"call_write", "memory_write", mustJSON(t, map[string]any{"path": "facts/user.md", "content": edited, "version": nil})},
			toolCall{"call_custom", "custom:", "SELECT 1"},
			toolCall{"call_bogus", "memory_forget", `{}`},
		),
		chatText(t, "done"),
	)
	var own []string
	_, err := answer(context.Background(), client, store, "I'm a captain now.", func(tc openai.ChatCompletionMessageToolCallUnion) string {
		own = append(own, tc.ID)
		return "sunny"
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, dir, "facts/user.md"); got != edited {
		t.Errorf("the write after the read of the same message did not happen:\n%s", got)
	}
	if !slices.Equal(own, []string{"call_weather", "call_custom"}) {
		t.Errorf("the program answered %v, want call_weather and call_custom", own)
	}

	var ids []string
	answers := map[string]string{}
	for _, m := range messages(t, api.body(t, 1)) {
		if m["role"] == "tool" {
			id, _ := m["tool_call_id"].(string)
			ids = append(ids, id)
			answers[id], _ = m["content"].(string)
		}
	}
	if want := []string{"call_read", "call_write", "call_bogus", "call_weather", "call_custom"}; !slices.Equal(ids, want) {
		t.Errorf("tool messages answer %v, want %v (memory calls in order, then the program's)", ids, want)
	}
	if !strings.Contains(answers["call_read"], "- Name: Ada") || strings.HasPrefix(answers["call_read"], "Error") {
		t.Errorf("memory_read answered %q", answers["call_read"])
	}
	if !strings.HasPrefix(answers["call_bogus"], "Error: ") || !strings.Contains(answers["call_bogus"], "memory_read") {
		t.Errorf("memory_forget answered %q, want an error listing the memory tools", answers["call_bogus"])
	}
}

// TestMistakes: mistakes the model can fix are tool messages starting
// "Error: ", with no Go error, and change nothing: a write over a file this
// conversation has not read, invalid JSON arguments, a path outside memory.
func TestMistakes(t *testing.T) {
	store, dir := openStore(t)
	if err := store.Write(context.Background(), "facts/user.md", userFile); err != nil {
		t.Fatal(err)
	}
	msg := openai.ChatCompletionMessage{}
	if err := json.Unmarshal([]byte(`{"role":"assistant","content":null,"refusal":null,"tool_calls":[
		{"id":"c1","type":"function","function":{"name":"memory_write","arguments":"{\"path\":\"facts/user.md\",\"content\":\"# User\\n\",\"version\":null}"}},
		{"id":"c2","type":"function","function":{"name":"memory_read","arguments":"{\"path\":"}},
		{"id":"c3","type":"function","function":{"name":"memory_read","arguments":"{\"path\":\"../etc/passwd\",\"line\":null}"}}
	]}`), &msg); err != nil {
		t.Fatal(err)
	}
	got, err := openaimem.Dispatch(context.Background(), store.NewSession(), msg)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d tool messages, want 3", len(got))
	}
	for i, want := range []string{"memory_read", "JSON", ".. segments"} {
		m := got[i].OfTool
		if m == nil || m.ToolCallID != fmt.Sprintf("c%d", i+1) {
			t.Fatalf("answer %d is %+v, want a tool message for c%d", i, got[i], i+1)
		}
		text := m.Content.OfString.Value
		if !strings.HasPrefix(text, "Error: ") || !strings.Contains(text, want) {
			t.Errorf("c%d answered %q, want an error mentioning %q", i+1, text, want)
		}
	}
	if got := readFile(t, dir, "facts/user.md"); got != userFile {
		t.Errorf("a refused write changed the file:\n%s", got)
	}

	// A message without tool calls needs no answer.
	if got, err := openaimem.Dispatch(context.Background(), store.NewSession(), openai.ChatCompletionMessage{Content: "hi"}); got != nil || err != nil {
		t.Errorf("Dispatch of a text message: %v %v", got, err)
	}
}

// TestHostErrors: a closed store, a cancelled context and a nil session are
// Go errors from Dispatch (and so from the loop), never tool messages.
func TestHostErrors(t *testing.T) {
	store, _ := openStore(t)
	conv := store.NewSession()
	msg := openai.ChatCompletionMessage{}
	if err := json.Unmarshal([]byte(`{"role":"assistant","content":null,"refusal":null,"tool_calls":[
		{"id":"c1","type":"function","function":{"name":"memory_list","arguments":"{}"}}]}`), &msg); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got, err := openaimem.Dispatch(ctx, conv, msg); got != nil || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, %v; want no messages and context.Canceled", got, err)
	}

	if got, err := openaimem.Dispatch(context.Background(), nil, msg); got != nil || err == nil || !strings.Contains(err.Error(), "nil *memory.Session") {
		t.Errorf("nil session: %v, %v", got, err)
	}
	if openaimem.Tools(nil) != nil || openaimem.ResponseTools(nil) != nil {
		t.Error("the tools of a nil session are not nil")
	}

	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := openaimem.Dispatch(context.Background(), conv, msg)
	if got != nil || !errors.Is(err, memory.ErrClosed) {
		t.Fatalf("closed store: %v, %v; want no messages and memory.ErrClosed", got, err)
	}
	if !strings.HasPrefix(err.Error(), "memory_list (call c1): ") {
		t.Errorf("the error %q does not name the tool and call", err)
	}

	var resp responses.Response
	if err := json.Unmarshal([]byte(`{"id":"resp_1","object":"response","status":"completed","output":[
		{"type":"function_call","id":"fc_1","call_id":"call_1","name":"memory_list","arguments":"{}","status":"completed"}]}`), &resp); err != nil {
		t.Fatal(err)
	}
	if got, err := openaimem.DispatchResponse(context.Background(), conv, &resp); got != nil || !errors.Is(err, memory.ErrClosed) {
		t.Errorf("DispatchResponse on a closed store: %v, %v; want no items and memory.ErrClosed", got, err)
	}
}

// strictViolations lists where schema breaks OpenAI's strict mode rules for
// function parameters: an object at the root; every object with
// additionalProperties false and every property required; only the keywords
// and types strict mode supports; a nullable value as a type list of one
// type and "null"; arrays with items.
func strictViolations(schema any, at string) []string {
	node, ok := schema.(map[string]any)
	if !ok {
		return []string{at + ": not an object"}
	}
	var out []string
	allowed := map[string]bool{"type": true, "description": true, "properties": true, "required": true, "additionalProperties": true, "items": true, "enum": true}
	for k := range node {
		if !allowed[k] {
			out = append(out, fmt.Sprintf("%s: keyword %q", at, k))
		}
	}
	var types []string
	switch tv := node["type"].(type) {
	case string:
		types = []string{tv}
	case []any:
		for _, x := range tv {
			s, _ := x.(string)
			types = append(types, s)
		}
		if len(types) != 2 || !slices.Contains(types, "null") {
			out = append(out, fmt.Sprintf("%s: type list %v is not one type and null", at, types))
		}
	default:
		out = append(out, at+": no type")
	}
	if at == "$" && !slices.Equal(types, []string{"object"}) {
		out = append(out, "$: the root is not an object")
	}
	for _, ty := range types {
		switch ty {
		case "string", "number", "integer", "boolean", "null":
		case "object":
			props, ok := node["properties"].(map[string]any)
			if !ok {
				out = append(out, at+": object without properties")
			}
			if node["additionalProperties"] != false {
				out = append(out, at+": additionalProperties is not false")
			}
			var keys, req []string
			for k, v := range props {
				keys = append(keys, k)
				out = append(out, strictViolations(v, at+"."+k)...)
			}
			r, _ := node["required"].([]any)
			for _, x := range r {
				s, _ := x.(string)
				req = append(req, s)
			}
			sort.Strings(keys)
			sort.Strings(req)
			if !slices.Equal(keys, req) {
				out = append(out, fmt.Sprintf("%s: required %v, properties %v", at, req, keys))
			}
		case "array":
			items, ok := node["items"]
			if !ok {
				out = append(out, at+": array without items")
			} else {
				out = append(out, strictViolations(items, at+"[]")...)
			}
		default:
			out = append(out, fmt.Sprintf("%s: type %q", at, ty))
		}
	}
	return out
}

// TestStrictSchemas checks every tool's parameters, as sent, against strict
// mode's rules, and that the check finds a schema that breaks them.
func TestStrictSchemas(t *testing.T) {
	store, _ := openStore(t)
	tools := openaimem.Tools(store.NewSession())
	if len(tools) != 6 {
		t.Fatalf("%d tools, want 6", len(tools))
	}
	for _, tool := range tools {
		var sent map[string]any
		if err := json.Unmarshal([]byte(mustJSON(t, tool)), &sent); err != nil {
			t.Fatal(err)
		}
		fn, _ := sent["function"].(map[string]any)
		if fn["strict"] != true {
			t.Errorf("%v: strict is not true", fn["name"])
		}
		if v := strictViolations(fn["parameters"], "$"); len(v) > 0 {
			t.Errorf("%v breaks strict mode: %v", fn["name"], v)
		}
	}
	for _, rtool := range openaimem.ResponseTools(store.NewSession()) {
		var sent map[string]any
		if err := json.Unmarshal([]byte(mustJSON(t, rtool)), &sent); err != nil {
			t.Fatal(err)
		}
		if sent["type"] != "function" || sent["strict"] != true || sent["description"] == "" {
			t.Errorf("Responses tool %v is not a strict function with a description", sent["name"])
		}
		if v := strictViolations(sent["parameters"], "$"); len(v) > 0 {
			t.Errorf("Responses tool %v breaks strict mode: %v", sent["name"], v)
		}
	}

	bad := map[string]any{"type": "object", "properties": map[string]any{
		"a": map[string]any{"type": "string"},
		"b": map[string]any{"type": "array", "items": map[string]any{"type": "object", "properties": map[string]any{}, "required": []any{}}},
		"c": map[string]any{"type": []any{"string", "integer"}, "default": "x"},
	}, "required": []any{"a"}, "additionalProperties": false}
	v := strictViolations(bad, "$")
	for _, want := range []string{"$: required [a]", "$.b[]: additionalProperties", "$.c: keyword \"default\"", "$.c: type list"} {
		if !slices.ContainsFunc(v, func(s string) bool { return strings.HasPrefix(s, want) }) {
			t.Errorf("the check missed %q in %v", want, v)
		}
	}
}

// TestResponsesLoop runs a Responses API loop with the SDK's client: strict
// function tools in the request, the model's function_call done, and the
// next request's input a function_call_output for its call id.
func TestResponsesLoop(t *testing.T) {
	store, dir := openStore(t)
	write := mustJSON(t, map[string]any{"path": "facts/user.md", "content": userFile, "version": nil})
	client, api := newClient(t,
		mustJSON(t, map[string]any{
			"id": "resp_1", "object": "response", "created_at": 1, "status": "completed", "model": "gpt-test",
			"output": []any{
				map[string]any{"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "memory_write", "arguments": write, "status": "completed"},
				map[string]any{"type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "get_weather", "arguments": `{"city":"Oslo"}`, "status": "completed"},
			},
		}),
		mustJSON(t, map[string]any{
			"id": "resp_2", "object": "response", "created_at": 2, "status": "completed", "model": "gpt-test",
			"output": []any{map[string]any{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
				"content": []any{map[string]any{"type": "output_text", "text": "Noted.", "annotations": []any{}}}}},
		}),
	)
	ctx := context.Background()
	conv := store.NewSession()
	params := responses.ResponseNewParams{
		Model: "gpt-test",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("I'm Ada, a pilot.")},
		Tools: openaimem.ResponseTools(conv),
	}
	var final string
	for range 5 {
		resp, err := client.Responses.New(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		answers, err := openaimem.DispatchResponse(ctx, conv, resp)
		if err != nil {
			t.Fatal(err)
		}
		for _, item := range resp.Output {
			if item.Type == "function_call" && !openaimem.IsMemoryTool(item.Name) {
				out := responses.ResponseInputItemParamOfFunctionCallOutput("sunny")
				out.OfFunctionCallOutput.CallID = openai.String(item.CallID)
				answers = append(answers, out)
			}
		}
		if len(answers) == 0 {
			final = resp.OutputText()
			break
		}
		params.PreviousResponseID = openai.String(resp.ID)
		params.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: answers}
	}
	if final != "Noted." {
		t.Errorf("final text %q", final)
	}
	if got := readFile(t, dir, "facts/user.md"); got != userFile {
		t.Errorf("facts/user.md:\n%s", got)
	}
	tools, _ := api.body(t, 0)["tools"].([]any)
	if len(tools) != 6 {
		t.Errorf("the request has %d tools, want 6", len(tools))
	}
	second := api.body(t, 1)
	if second["previous_response_id"] != "resp_1" {
		t.Errorf("previous_response_id %v", second["previous_response_id"])
	}
	input, _ := second["input"].([]any)
	if len(input) != 2 {
		t.Fatalf("the second request's input is %v, want two function_call_output items", second["input"])
	}
	first, _ := input[0].(map[string]any)
	out, _ := first["output"].(string)
	if first["type"] != "function_call_output" || first["call_id"] != "call_1" || !strings.HasPrefix(out, `{"path":"facts/user.md"`) {
		t.Errorf("input 1 is %v, want the write's output for call_1", first)
	}
	if got, err := openaimem.DispatchResponse(ctx, conv, nil); got != nil || err != nil {
		t.Errorf("DispatchResponse(nil): %v %v", got, err)
	}
}
