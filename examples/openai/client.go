package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/mdmemory/memory"
)

// chatClient is a memory.LLM over an OpenAI-compatible Chat Completions
// endpoint: POST {baseURL}/chat/completions. It works with OpenAI and with
// servers that speak the same format (Ollama, vLLM, llama.cpp server).
type chatClient struct {
	baseURL string // such as https://api.openai.com/v1
	apiKey  string // sent as a bearer token when not empty
	model   string
	http    *http.Client
}

// The wire format, as far as this example uses it.
type (
	chatRequest struct {
		Model    string        `json:"model"`
		Messages []chatMessage `json:"messages"`
		Tools    []chatTool    `json:"tools,omitempty"`
	}
	chatMessage struct {
		Role       string         `json:"role"`
		Content    *string        `json:"content"` // null on an assistant message that only calls tools
		ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
		ToolCallID string         `json:"tool_call_id,omitempty"`
	}
	chatToolCall struct {
		ID       string       `json:"id"`
		Type     string       `json:"type"`
		Function chatFunction `json:"function"`
	}
	chatFunction struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"` // a JSON object, encoded as a string
	}
	chatTool struct {
		Type     string      `json:"type"`
		Function chatToolDef `json:"function"`
	}
	chatToolDef struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	}
	chatResponse struct {
		Choices []struct {
			Message chatMessage `json:"message"`
		} `json:"choices"`
	}
	chatError struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
)

// maxBody bounds what the client reads of a response.
const maxBody = 16 << 20

// Complete sends req as one chat completion and returns the first choice.
func (c *chatClient) Complete(ctx context.Context, req memory.Request) (memory.Response, error) {
	body, err := json.Marshal(c.encode(req))
	if err != nil {
		return memory.Response{}, fmt.Errorf("openai: encode request: %w", err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(c.baseURL, "/")+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return memory.Response{}, fmt.Errorf("openai: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	if c.apiKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	hresp, err := c.http.Do(hreq)
	if err != nil {
		return memory.Response{}, fmt.Errorf("openai: %w", err)
	}
	defer hresp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(hresp.Body, maxBody))
	if err != nil {
		return memory.Response{}, fmt.Errorf("openai: read response: %w", err)
	}
	if hresp.StatusCode != http.StatusOK {
		var e chatError
		if json.Unmarshal(data, &e) == nil && e.Error.Message != "" {
			return memory.Response{}, fmt.Errorf("openai: %s: %s", hresp.Status, e.Error.Message)
		}
		return memory.Response{}, fmt.Errorf("openai: %s: %s", hresp.Status, bytes.TrimSpace(data[:min(len(data), 200)]))
	}
	var resp chatResponse
	if err := json.Unmarshal(data, &resp); err != nil {
		return memory.Response{}, fmt.Errorf("openai: decode response: %w", err)
	}
	if len(resp.Choices) == 0 {
		return memory.Response{}, errors.New("openai: the response has no choices")
	}
	return decode(resp.Choices[0].Message), nil
}

// encode translates a memory.Request to the wire: the system prompt becomes
// the first message, tools become function definitions.
func (c *chatClient) encode(req memory.Request) chatRequest {
	out := chatRequest{Model: c.model}
	if req.System != "" {
		out.Messages = append(out.Messages, chatMessage{Role: "system", Content: &req.System})
	}
	for _, m := range req.Messages {
		cm := chatMessage{Role: m.Role, Content: &m.Content, ToolCallID: m.ToolCallID}
		for _, tc := range m.ToolCalls {
			args := string(tc.Arguments)
			if args == "" {
				args = "{}"
			}
			cm.ToolCalls = append(cm.ToolCalls, chatToolCall{ID: tc.ID, Type: "function", Function: chatFunction{Name: tc.Name, Arguments: args}})
		}
		if m.Content == "" && len(m.ToolCalls) > 0 {
			cm.Content = nil
		}
		out.Messages = append(out.Messages, cm)
	}
	for _, t := range req.Tools {
		out.Tools = append(out.Tools, chatTool{Type: "function", Function: chatToolDef{Name: t.Name, Description: t.Description, Parameters: t.InputSchema}})
	}
	return out
}

// decode translates the model's message back: text and tool calls.
func decode(m chatMessage) memory.Response {
	var resp memory.Response
	if m.Content != nil {
		resp.Content = *m.Content
	}
	for _, tc := range m.ToolCalls {
		resp.ToolCalls = append(resp.ToolCalls, memory.ToolCall{
			ID:        tc.ID,
			Name:      tc.Function.Name,
			Arguments: json.RawMessage(tc.Function.Arguments),
		})
	}
	return resp
}
