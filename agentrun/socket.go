package agentrun

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/vaultgate/vaultgate/audit"
	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/internal/peercred"
	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/server"
	"github.com/vaultgate/vaultgate/transport"
)

// The socket's handshake: the client's first line is the token, the
// server answers "ok" or "denied REASON" and, after ok, the connection
// carries MCP's stdio framing; or, when the token is followed by a space
// and reportMode, the hook's report of refused built-ins (builtins.go).
const (
	helloOK     = "ok"
	helloDenied = "denied "
	// helloWait bounds how long a connection may take to give its token.
	helloWait = 10 * time.Second
)

// newToken is a per-run token: 32 random bytes, hex.
func newToken() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("agentrun: crypto/rand failed: " + err.Error())
	}
	return hex.EncodeToString(b[:])
}

// gateway serves the vault to one run's agent on its socket.
type gateway struct {
	ln     *net.UnixListener
	gate   *server.Gate
	policy *config.Policy
	runID  string
	// session is the run's: one across all its connections.
	session *policy.Session
	token   string
	uid     int // the only peer uid let in
	errLog  *log.Logger

	mu    sync.Mutex
	conns map[net.Conn]bool
	n     int
	wg    sync.WaitGroup
	// reported are the tool_use_ids of the attempts recorded (builtins.go).
	reported map[string]bool
}

// serve accepts connections until the listener is closed; it returns the
// error that stopped it, nil when it was closed on purpose.
func (g *gateway) serve(ctx context.Context) error {
	for {
		c, err := g.ln.AcceptUnix()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return fmt.Errorf("agentrun: accepting on %s: %w", g.ln.Addr(), err)
		}
		g.mu.Lock()
		g.conns[c] = true
		g.n++
		n := g.n
		g.mu.Unlock()
		g.wg.Go(func() {
			defer func() {
				g.mu.Lock()
				delete(g.conns, c)
				g.mu.Unlock()
				c.Close()
			}()
			g.conn(ctx, c, n)
		})
	}
}

// close stops accepting and ends every connection.
func (g *gateway) close() {
	g.ln.Close()
	g.mu.Lock()
	for c := range g.conns {
		c.Close()
	}
	g.mu.Unlock()
	g.wg.Wait()
}

func (g *gateway) conn(ctx context.Context, c *net.UnixConn, n int) {
	deny := func(why string) {
		c.SetWriteDeadline(time.Now().Add(time.Second))
		io.WriteString(c, helloDenied+why+"\n")
		if g.errLog != nil {
			g.errLog.Printf("run %s: refused a connection: %s", g.runID, why)
		}
	}
	uid, err := peercred.UID(c)
	if err != nil {
		deny("can't tell who is calling: " + err.Error())
		return
	}
	if uid != g.uid {
		deny(fmt.Sprintf("uid %d is not the agent's (%d)", uid, g.uid))
		return
	}
	c.SetReadDeadline(time.Now().Add(helloWait))
	r := bufio.NewReader(io.LimitReader(c, 1<<10))
	line, err := r.ReadString('\n')
	if err != nil {
		deny("no token")
		return
	}
	got, mode, _ := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
	if subtle.ConstantTimeCompare([]byte(got), []byte(g.token)) != 1 {
		deny("wrong token")
		return
	}
	if mode != "" && mode != reportMode {
		deny("unknown mode")
		return
	}
	c.SetReadDeadline(time.Time{})
	if _, err := io.WriteString(c, helloOK+"\n"); err != nil {
		return
	}
	// What the limit reader buffered past the token belongs to MCP, or to
	// the hook's report.
	in := io.MultiReader(r, c)
	if mode == reportMode {
		c.SetReadDeadline(time.Now().Add(helloWait))
		g.report(ctx, bufio.NewReaderSize(io.LimitReader(in, maxReport), 64<<10), c)
		return
	}
	// Every connection of the run is the run's one session: an agent that
	// reconnects is counted on, not afresh.
	caller := server.Caller{Via: server.ViaRun, Run: g.runID, Session: g.session, Policy: g.policy}
	if err := transport.ServeStream(ctx, g.gate, caller, bufio.NewReader(in), c, g.errLog); err != nil && ctx.Err() == nil && g.errLog != nil {
		g.errLog.Printf("run %s: connection %d: %v", g.runID, n, err)
	}
}

// newRunID is the run's id, as the audit's run field carries it.
func newRunID() string { return audit.NewID() }
