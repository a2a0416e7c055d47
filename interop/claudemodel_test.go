package interop

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// scriptedModel is a stand-in for the Anthropic Messages API that Claude
// Code talks to: each reply is the next step of a script, chosen by how many
// assistant turns the request already holds, so Claude Code's own retries
// and re-sends can't shift it. A step is a tool call; past the script the
// model says "done" and ends its turn. It streams as the API does
// (message_start, content_block_start, content_block_delta with text_delta
// or input_json_delta, content_block_stop, message_delta with the
// stop_reason, message_stop), and keeps every tool_result Claude Code sends
// back, and the names of the tools Claude Code offered.
type scriptedModel struct {
	steps []modelStep

	mu      sync.Mutex
	results map[string]toolResult // by tool_use_id
	tools   []string              // offered in the first request with tools
	calls   int
}

type modelStep struct {
	tool  string
	input map[string]any
}

type toolResult struct {
	Text    string
	IsError bool
}

func stepID(i int) string { return fmt.Sprintf("toolu_vg%03d", i) }

func newScriptedModel(t *testing.T, steps []modelStep) (*scriptedModel, string) {
	m := &scriptedModel{steps: steps, results: map[string]toolResult{}}
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	return m, srv.URL
}

type messagesRequest struct {
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
	Model string `json:"model"`
}

type contentBlock struct {
	Type      string          `json:"type"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

func (m *scriptedModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, "/v1/messages") {
		http.NotFound(w, r)
		return
	}
	if strings.HasSuffix(r.URL.Path, "/count_tokens") {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"input_tokens":1}`))
		return
	}
	var req messagesRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	turns := 0
	m.mu.Lock()
	m.calls++
	for _, msg := range req.Messages {
		if msg.Role == "assistant" {
			turns++
			continue
		}
		var blocks []contentBlock
		if json.Unmarshal(msg.Content, &blocks) != nil {
			continue // a plain string: the prompt
		}
		for _, b := range blocks {
			if b.Type == "tool_result" {
				m.results[b.ToolUseID] = toolResult{Text: resultText(b.Content), IsError: b.IsError}
			}
		}
	}
	if len(req.Tools) > 0 && m.tools == nil {
		for _, t := range req.Tools {
			m.tools = append(m.tools, t.Name)
		}
	}
	var step *modelStep
	if len(req.Tools) > 0 && turns < len(m.steps) {
		step = &m.steps[turns]
	}
	m.mu.Unlock()

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	event := func(name string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": fmt.Sprintf("msg_vg%03d", turns), "type": "message", "role": "assistant", "model": req.Model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 1, "output_tokens": 1},
	}})
	stop := "end_turn"
	if step != nil {
		input, _ := json.Marshal(step.input)
		event("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "tool_use", "id": stepID(turns), "name": step.tool, "input": map[string]any{}}})
		// the input arrives in two pieces, as a real stream splits it
		half := len(input) / 2
		for _, part := range []string{string(input[:half]), string(input[half:])} {
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
		}
		stop = "tool_use"
	} else {
		event("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "text", "text": ""}})
		event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": "done"}})
	}
	event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 1}})
	event("message_stop", map[string]any{"type": "message_stop"})
}

// resultText is a tool_result's content as text: a string, or its text
// blocks joined.
func resultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct{ Type, Text string }
	json.Unmarshal(raw, &blocks)
	var b strings.Builder
	for _, x := range blocks {
		b.WriteString(x.Text)
	}
	return b.String()
}

func (m *scriptedModel) result(i int) (toolResult, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.results[stepID(i)]
	return r, ok
}
