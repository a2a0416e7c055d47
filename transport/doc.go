// Package transport is MCP over stdio and Streamable HTTP for a Gate: it
// turns each agent's tool set into MCP tools whose handlers call
// server.Gate.Call, and turns an Outcome into the result the model reads.
//
// It is the only package that links an MCP library. It must never judge,
// run or record a call itself: that is the gate's job, so that the hook
// and `vaultgate check`, which do not link this package, decide exactly as
// it does.
package transport
