// Command runprobe is the stand-in agent of cmd/vaultgate's run tests:
// started by `vaultgate run`, it looks at what it can see and do from the
// inside and prints it as JSON on stdout.
//
//	runprobe probe PATH...   check everything; try to read each PATH
//	runprobe sleep           start a child in a session of its own, say so in $HOME/ready, and sleep
//	runprobe touch FILE      create FILE (a mark that the agent ran) and exit
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

type report struct {
	UID, EUID, GID int
	Groups         []int
	Env            []string
	Cwd            string
	Reads          map[string]string // path → "read" or the error
	Pids           []int             // visible in /proc
	Environs       []int             // pids other than its own whose environ it could read
	Cmdlines       []string          // every argv visible, while the bridge runs
	Fds            []string          // its own descriptors at start
	Writes         map[string]string // path → "written" or the error
	Launcher       int               // vaultgate's pid on the host, from the test
	Kill, Ptrace   string            // what signalling and tracing vaultgate gave
	Token          string            // the run's token, to look for in argv
	Tools          []string
	Read           string
	Delete         string
	DeleteErr      bool
	Status         map[string]string // CapEff, CapPrm, CapBnd, CapAmb, NoNewPrivs of /proc/self/status
	Err            []string
}

func main() {
	switch os.Args[1] {
	case "touch":
		os.WriteFile(os.Args[2], []byte("ran"), 0o644)
	case "sleep":
		c := exec.Command("/bin/sleep", "1000")
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := c.Start(); err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		os.WriteFile(filepath.Join(os.Getenv("HOME"), "ready"), []byte(strconv.Itoa(c.Process.Pid)), 0o644)
		time.Sleep(1000 * time.Second)
	case "probe":
		r := probe(os.Args[2:])
		json.NewEncoder(os.Stdout).Encode(r)
	}
}

func probe(paths []string) *report {
	r := &report{Reads: map[string]string{}, Writes: map[string]string{}, Status: map[string]string{}}
	fail := func(f string, a ...any) { r.Err = append(r.Err, fmt.Sprintf(f, a...)) }
	if ents, err := os.ReadDir("/proc/self/fd"); err == nil {
		for _, e := range ents {
			r.Fds = append(r.Fds, e.Name())
		}
	}
	r.UID, r.EUID, r.GID = os.Getuid(), os.Geteuid(), os.Getgid()
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			k, v, _ := strings.Cut(l, ":")
			switch k {
			case "CapEff", "CapPrm", "CapBnd", "CapAmb", "CapInh", "NoNewPrivs":
				r.Status[k] = strings.TrimSpace(v)
			}
		}
	}
	r.Groups, _ = os.Getgroups()
	r.Env = os.Environ()
	r.Cwd, _ = os.Getwd()
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			r.Reads[p] = "read " + strconv.Itoa(len(b)) + " bytes"
		} else if ents, derr := os.ReadDir(p); derr == nil {
			if len(ents) > 0 {
				r.Reads[p] = fmt.Sprintf("listed %d entries", len(ents))
			} else {
				r.Reads[p] = "empty"
			}
		} else {
			r.Reads[p] = err.Error()
		}
	}
	home := os.Getenv("HOME")
	for _, p := range []string{filepath.Join(home, "probe-wrote"), "/tmp/probe-wrote", "/usr/probe-wrote", "/etc/probe-wrote", "/probe-wrote"} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			r.Writes[p] = err.Error()
		} else {
			r.Writes[p] = "written"
		}
	}
	// vaultgate's pid on the host, which the test leaves in the home.
	for i := 0; i < 200 && r.Launcher == 0; i++ {
		if b, err := os.ReadFile(filepath.Join(home, "launcher.pid")); err == nil {
			r.Launcher, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		} else {
			time.Sleep(50 * time.Millisecond)
		}
	}
	if r.Launcher > 0 {
		r.Kill = errText(syscall.Kill(r.Launcher, 0))
		r.Ptrace = errText(syscall.PtraceAttach(r.Launcher))
	}

	cfgPath := os.Getenv("VAULTGATE_MCP_CONFIG")
	var cfg struct {
		MCPServers map[string]struct {
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		} `json:"mcpServers"`
	}
	b, err := os.ReadFile(cfgPath)
	if err == nil {
		err = json.Unmarshal(b, &cfg)
	}
	srv, ok := cfg.MCPServers["vault"]
	if err != nil || !ok {
		fail("mcp config %q: %v %s", cfgPath, err, b)
		return r
	}
	if t, err := os.ReadFile(srv.Env["VAULTGATE_TOKEN_FILE"]); err == nil {
		r.Token = strings.TrimSpace(string(t))
	}
	var env []string
	for k, v := range srv.Env {
		env = append(env, k+"="+v)
	}
	c, err := client.NewStdioMCPClient(srv.Command, env, srv.Args...)
	if err != nil {
		fail("mcp client: %v", err)
		return r
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "runprobe", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		fail("initialize: %v", err)
		return r
	}
	list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		fail("tools/list: %v", err)
		return r
	}
	for _, t := range list.Tools {
		r.Tools = append(r.Tools, t.Name)
	}
	call := func(name string, args map[string]any) (string, bool) {
		req := mcp.CallToolRequest{}
		req.Params.Name = name
		req.Params.Arguments = args
		res, err := c.CallTool(ctx, req)
		if err != nil {
			fail("%s: %v", name, err)
			return "", false
		}
		var sb strings.Builder
		for _, ct := range res.Content {
			sb.WriteString(mcp.GetTextFromContent(ct))
		}
		return sb.String(), res.IsError
	}
	r.Read, _ = call("read", map[string]any{"path": "notes/a.md"})
	r.Delete, r.DeleteErr = call("delete", map[string]any{"path": "мета/x.md"})

	// With the bridge running: every process and argv there is, and every
	// environ that can be read.
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		r.Pids = append(r.Pids, pid)
		if cl, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil {
			r.Cmdlines = append(r.Cmdlines, strings.ReplaceAll(string(cl), "\x00", " "))
		}
		if pid == os.Getpid() {
			continue
		}
		if _, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ")); err == nil && !ownChild(pid) {
			r.Environs = append(r.Environs, pid)
		}
	}
	if ps, err := exec.Command("/usr/bin/ps", "-eo", "args").Output(); err == nil {
		r.Cmdlines = append(r.Cmdlines, strings.Split(string(ps), "\n")...)
	}
	// Let the test look at the host's argv while the bridge runs.
	os.WriteFile(filepath.Join(home, "mid"), nil, 0o644)
	for i := 0; i < 400; i++ {
		if _, err := os.Stat(filepath.Join(home, "scanned")); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	return r
}

// ownChild reports whether pid is a child of this process (the bridge it
// started itself, whose environ is its own to read).
func ownChild(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 1 && f[1] == strconv.Itoa(os.Getpid())
}

func errText(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}
