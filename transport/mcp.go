package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"slices"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/say"
	"github.com/vaultgate/vaultgate/server"
	"github.com/vaultgate/vaultgate/tools"
)

// Version is the server's version, as MCP's initialize reports it.
var Version = "0.1.0"

// CallerFunc tells who is calling, from the request's context.
type CallerFunc func(ctx context.Context) (server.Caller, error)

// MCP builds the MCP server for an agent: one tool per tool of its set, each
// handler a thin call into Gate.Call.
func MCP(g *server.Gate, p *config.Policy, caller CallerFunc) *mcpserver.MCPServer {
	hooks := &mcpserver.Hooks{}
	// mcp-go answers a call of a tool it does not have by itself, before
	// any handler: audit it here, so that every call is a line.
	hooks.AddOnError(func(ctx context.Context, _ any, method mcp.MCPMethod, message any, err error) {
		req, ok := message.(*mcp.CallToolRequest)
		if method != mcp.MethodToolsCall || !ok || !errors.Is(err, mcpserver.ErrToolNotFound) {
			return
		}
		if c, cerr := caller(ctx); cerr == nil {
			g.Call(ctx, c, req.Params.Name, req.Params.Arguments, server.Serve)
		}
	})
	s := mcpserver.NewMCPServer("vaultgate", Version,
		mcpserver.WithToolCapabilities(false),
		mcpserver.WithInstructions(instructions(p)),
		mcpserver.WithHooks(hooks),
	)
	set := g.ToolSet(server.Caller{Policy: p})
	for _, t := range set.Tools() {
		name := t.Name
		s.AddTool(mcpTool(t), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			c, err := caller(ctx)
			if err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			return Result(g.Call(ctx, c, name, req.Params.Arguments, server.Serve)), nil
		})
	}
	return s
}

// Result turns an outcome into what the model receives.
func Result(o *server.Outcome) *mcp.CallToolResult {
	text := o.Text()
	var r *mcp.CallToolResult
	if o.Result != nil && o.Result.Structured != nil && o.Err == nil {
		r = mcp.NewToolResultStructured(o.Result.Structured, text)
	} else {
		r = mcp.NewToolResultText(text)
	}
	r.IsError = o.IsError()
	return r
}

func mcpTool(t tools.Tool) mcp.Tool {
	opts := []mcp.ToolOption{
		mcp.WithDescription(t.Description),
		mcp.WithTitleAnnotation(t.Title),
		mcp.WithReadOnlyHintAnnotation(t.ReadOnly),
		mcp.WithDestructiveHintAnnotation(t.Destructive),
		mcp.WithIdempotentHintAnnotation(t.Idempotent),
		mcp.WithOpenWorldHintAnnotation(t.OpenWorld),
		mcp.WithSchemaAdditionalProperties(false),
	}
	if schema := tools.OutputSchema(t.Name); schema != nil {
		opts = append(opts, mcp.WithRawOutputSchema(schema))
	}
	for _, p := range t.Params {
		po := []mcp.PropertyOption{mcp.Description(p.Description)}
		if p.Required {
			po = append(po, mcp.Required())
		}
		switch p.Type {
		case "string":
			opts = append(opts, mcp.WithString(p.Name, po...))
		case "integer":
			opts = append(opts, mcp.WithInteger(p.Name, po...))
		case "boolean":
			opts = append(opts, mcp.WithBoolean(p.Name, po...))
		}
	}
	return mcp.NewTool(t.Name, opts...)
}

// instructions tell the model at initialize, in its language, where it may
// do what, so it need not learn the zones by being refused.
func instructions(p *config.Policy) string {
	var m say.Instructions
	for _, e := range p.Zones.Entries() {
		if e.Mode.Listed() { // a hidden zone's name is not the model's business
			m.Zones = append(m.Zones, say.ZoneLine{Path: e.Path.String(), Mode: e.Mode})
		}
	}
	return m.Text(p.Lang)
}

// ServeStdio serves one agent over stdin and stdout until in closes. One
// process is one session.
func ServeStdio(ctx context.Context, g *server.Gate, p *config.Policy, session *policy.Session, in io.Reader, out io.Writer, errLog *log.Logger) error {
	return ServeStream(ctx, g, server.Caller{Via: server.ViaStdio, Session: session, Policy: p}, in, out, errLog)
}

// ServeStream serves one caller over a byte stream that carries MCP's
// stdio framing (stdin and stdout, a connection of vaultgate run's socket)
// until in closes.
func ServeStream(ctx context.Context, g *server.Gate, c server.Caller, in io.Reader, out io.Writer, errLog *log.Logger) error {
	s := MCP(g, c.Policy, func(context.Context) (server.Caller, error) { return c, nil })
	stdio := mcpserver.NewStdioServer(s)
	if errLog != nil {
		stdio.SetErrorLogger(errLog)
	}
	// mcp-go reads a message as one line (bufio.Reader.ReadString), held
	// whole however long: the input is cut once a line passes max_body.
	return stdio.Listen(ctx, &lineLimit{r: in, max: maxBody(g.Config())}, out)
}

// lineLimit reads r until a line (the bytes between two newlines) is longer
// than max; from then on it errs with ErrMessageTooLarge, which ends the
// session. The bytes up to the limit are handed on with the error, so the
// reader above never holds more than about max of one line.
type lineLimit struct {
	r    io.Reader
	max  int64
	line int64 // bytes of the current line so far
	err  error
}

// ErrMessageTooLarge ends a stdio session whose message is longer than
// [http] max_body.
var ErrMessageTooLarge = errors.New("a message is longer than [http] max_body")

func (l *lineLimit) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	n, err := l.r.Read(p)
	for i, b := range p[:n] {
		if b == '\n' {
			l.line = 0
			continue
		}
		if l.line++; l.line > l.max {
			l.err = fmt.Errorf("stdio: %w (%d bytes): the session ends", ErrMessageTooLarge, l.max)
			return i, l.err
		}
	}
	return n, err
}

// sortedAgents lists agent names, the default first.
func sortedAgents(cfg *config.Config) []string {
	var names []string
	for n := range cfg.Agents {
		if n != config.DefaultAgent {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return append([]string{config.DefaultAgent}, names...)
}
