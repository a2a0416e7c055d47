// Command readfloor is the floor that vaultgate's read is measured
// against: an mcp-go server over stdio with one tool, read, that returns a
// file of the folder it is given as text, and does nothing else (no
// zones, no rules, no audit). Same library and transport as vaultgate, so
// the difference between the two is what vaultgate adds.
//
//	readfloor DIR
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: readfloor DIR")
		os.Exit(2)
	}
	root, err := os.OpenRoot(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "readfloor:", err)
		os.Exit(2)
	}
	s := server.NewMCPServer("readfloor", "1")
	s.AddTool(mcp.NewTool("read", mcp.WithString("path", mcp.Required())), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		p, err := req.RequireString("path")
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		data, err := root.ReadFile(filepath.Clean(p))
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		return mcp.NewToolResultText(string(data)), nil
	})
	if err := server.ServeStdio(s); err != nil {
		fmt.Fprintln(os.Stderr, "readfloor:", err)
		os.Exit(1)
	}
}
