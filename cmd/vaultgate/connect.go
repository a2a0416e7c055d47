package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"

	"github.com/vaultgate/vaultgate/agentrun"
	"github.com/vaultgate/vaultgate/claude"
	"github.com/vaultgate/vaultgate/say"
)

func init() {
	var refuse bool
	var lang, serverName, sock, tokenFile string
	register(&command{
		name:    "connect",
		summary: "bridge stdio to a vaultgate run's server (the agent's MCP server entry)",
		usage:   "[" + agentrun.HookArg + " [--lang en|ru] [--server NAME]]",
		help: `The command the MCP config of vaultgate run names: it connects to the run's
socket ($` + agentrun.SocketEnv + `), gives the run's token (read from the file
$` + agentrun.TokenFileEnv + ` names, never from argv), and then carries MCP
between its stdin and stdout and the server.

With ` + agentrun.HookArg + ` it is instead the hook of run --claude: on
PreToolUse it refuses Claude Code's built-ins that touch files, with a
reason that points to the vault's tools; on PostToolBatch it finds the calls
of those built-ins that Claude Code answered itself (it does not offer
them). With --socket and --token-file it reports each such attempt to the
run, which writes it in the audit log.`,
		flags: func(fs *flag.FlagSet) {
			fs.BoolVar(&refuse, strings.TrimPrefix(agentrun.HookArg, "--"), false, "be run --claude's hook: refuse Claude Code's file built-ins")
			fs.StringVar(&lang, "lang", "en", "the language of the hook's reasons")
			fs.StringVar(&serverName, "server", "vault", "the vault's MCP server name, for the hook's reasons")
			fs.StringVar(&sock, "socket", "", "the hook: the run's socket, where it reports refused built-ins")
			fs.StringVar(&tokenFile, "token-file", "", "the hook: the file holding the run's token")
		},
		run: func(fs *flag.FlagSet, args []string) int {
			if len(args) > 0 {
				return fail(exitUsage, "connect takes no arguments (got %q)", args[0])
			}
			if refuse {
				return refuseBuiltin(os.Stdin, os.Stdout, lang, serverName, sock, tokenFile)
			}
			return bridge(os.Stdin, os.Stdout)
		},
	})
}

// bridge connects to the run's socket and carries bytes both ways until
// the server closes the connection.
func bridge(in io.Reader, out io.Writer) int {
	sock := os.Getenv(agentrun.SocketEnv)
	tf := os.Getenv(agentrun.TokenFileEnv)
	if sock == "" || tf == "" {
		return fail(1, "connect: $%s and $%s must name the run's socket and token file (vaultgate run's MCP config sets them)", agentrun.SocketEnv, agentrun.TokenFileEnv)
	}
	tok, err := os.ReadFile(tf)
	if err != nil {
		return fail(1, "connect: the run's token: %v", err)
	}
	c, err := net.Dial("unix", sock)
	if err != nil {
		return fail(1, "connect: %v", err)
	}
	defer c.Close()
	if _, err := fmt.Fprintf(c, "%s\n", strings.TrimSpace(string(tok))); err != nil {
		return fail(1, "connect: %v", err)
	}
	r := bufio.NewReader(c)
	hello, err := r.ReadString('\n')
	if err != nil {
		return fail(1, "connect: the server did not answer: %v", err)
	}
	if hello = strings.TrimSuffix(hello, "\n"); hello != "ok" {
		return fail(1, "connect: the server refused: %s", strings.TrimPrefix(hello, "denied "))
	}
	go func() {
		io.Copy(c, in)
		if uc, ok := c.(*net.UnixConn); ok {
			uc.CloseWrite()
		}
	}()
	io.Copy(out, r)
	return exitOK
}

// refuseBuiltin answers one hook call of run --claude. PreToolUse: a
// refused built-in gets a deny with the reason, anything else no opinion
// (exit 0, no output). PostToolBatch: no answer. Either way the attempts
// at a refused built-in are reported to the run, when it says where.
// Input it can't read is a failure (exit 2 blocks the call).
func refuseBuiltin(in io.Reader, out io.Writer, lang, serverName, sock, tokenFile string) int {
	var call agentrun.HookInput
	if err := json.NewDecoder(io.LimitReader(in, 16<<20)).Decode(&call); err != nil {
		fmt.Fprintf(stderr, "vaultgate connect %s: %v\n", agentrun.HookArg, err)
		return 2
	}
	report := func() error {
		if attempts := call.Attempts(); len(attempts) > 0 && sock != "" {
			return agentrun.Report(sock, tokenFile, attempts)
		}
		return nil
	}
	if call.Event == "PostToolBatch" {
		if err := report(); err != nil {
			fmt.Fprintf(stderr, "vaultgate connect %s: the refused calls are not in the audit log: %v\n", agentrun.HookArg, err)
			return 1
		}
		return exitOK
	}
	instead, refused := claude.RunInstead(call.ToolName)
	if !refused {
		return exitOK
	}
	l, err := say.ParseLang(lang)
	if err != nil {
		l = say.English
	}
	// The refusal is written before the report, which may wait on the
	// run's socket: a hook that Claude Code times out must have refused.
	reason := say.RunBuiltinRefused{Tool: call.ToolName, Instead: instead, Server: serverName}.Text(l)
	json.NewEncoder(out).Encode(map[string]any{"hookSpecificOutput": map[string]any{
		"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": reason,
	}})
	if err := report(); err != nil {
		// Refused all the same; the person learns why no line shows it.
		fmt.Fprintf(stderr, "vaultgate connect %s: the refused call is not in the audit log: %v\n", agentrun.HookArg, err)
	}
	return exitOK
}
