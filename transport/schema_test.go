package transport

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Every tool that returns structured content declares an outputSchema, each
// structured result of a real call satisfies the schema the client was
// given, the text beside it keeps its hints, and the hints are in the
// structured content too (a client may show the model only that).
func TestOutputSchemas(t *testing.T) {
	e, _ := bashEnv(t, "")
	ctx := context.Background()
	list, err := e.client.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]*jsonschema.Schema{}
	for _, tool := range list.Tools {
		b, _ := json.Marshal(tool)
		var wire struct {
			OutputSchema json.RawMessage `json:"outputSchema"`
		}
		json.Unmarshal(b, &wire)
		if len(wire.OutputSchema) == 0 {
			continue
		}
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(wire.OutputSchema)))
		if err != nil {
			t.Fatalf("%s: outputSchema: %v", tool.Name, err)
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource(tool.Name+".json", doc); err != nil {
			t.Fatal(err)
		}
		if schemas[tool.Name], err = c.Compile(tool.Name + ".json"); err != nil {
			t.Fatalf("%s: outputSchema does not compile: %v", tool.Name, err)
		}
	}
	calls := []struct {
		tool      string
		args      map[string]any
		textHint  string // in the text content
		structKey string // the structured content's key that carries it
		hint      string // and what it says there
	}{
		{"list", map[string]any{}, "[edit: create, change and move, but never delete]", "zones", "create, change and move, but never delete"},
		{"list", map[string]any{"path": "мета", "depth": 3}, "[protected: read only]", "zones", "read only"},
		{"search", map[string]any{"query": "note", "max_results": 2}, "stopped at 2 results", "note", "stopped at 2 results"},
		{"search", map[string]any{"query": "no such text anywhere"}, "No matches.", "matches", "[]"},
		{"bash", map[string]any{"command": "echo hi; echo oops >&2"}, "exit code: 0", "stderr", "oops"},
	}
	seen := map[string]bool{}
	for _, c := range calls {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = c.tool, c.args
		res, err := e.client.CallTool(ctx, req)
		if err != nil || res.IsError {
			t.Fatalf("%s %v: %v %+v", c.tool, c.args, err, res)
		}
		if res.StructuredContent == nil {
			t.Fatalf("%s: no structured content", c.tool)
		}
		schema := schemas[c.tool]
		if schema == nil {
			t.Fatalf("%s returns structured content but declares no outputSchema", c.tool)
		}
		seen[c.tool] = true
		b, _ := json.Marshal(res.StructuredContent)
		v, _ := jsonschema.UnmarshalJSON(strings.NewReader(string(b)))
		if err := schema.Validate(v); err != nil {
			t.Errorf("%s %v: structured content %s does not satisfy its outputSchema: %v", c.tool, c.args, b, err)
		}
		var text strings.Builder
		for _, part := range res.Content {
			text.WriteString(mcp.GetTextFromContent(part))
		}
		if !strings.Contains(text.String(), c.textHint) {
			t.Errorf("%s: the text lost its hint %q:\n%s", c.tool, c.textHint, text.String())
		}
		var m map[string]json.RawMessage
		json.Unmarshal(b, &m)
		if !strings.Contains(string(m[c.structKey]), c.hint) {
			t.Errorf("%s: structured %q is %s, want it to hold %q", c.tool, c.structKey, m[c.structKey], c.hint)
		}
	}
	for name := range schemas {
		if !seen[name] {
			t.Errorf("%s declares an outputSchema no call here checked", name)
		}
	}
	for _, name := range []string{"list", "search", "bash"} {
		if schemas[name] == nil {
			t.Errorf("%s: no outputSchema", name)
		}
	}
}
