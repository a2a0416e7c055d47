package say

import "fmt"

// RunBuiltinRefused is a Claude Code built-in that touches files, refused
// under vaultgate run: the vault is not in the agent's view at all, so it
// could only act on the agent's own files; Instead is the vault's tool that
// does the same (mcp__SERVER__TOOL), or "" for none.
type RunBuiltinRefused struct {
	Tool, Instead, Server string
}

func (m RunBuiltinRefused) Text(l Lang) string {
	instead := fmt.Sprintf("mcp__%s__*", m.Server)
	if m.Instead != "" {
		instead = fmt.Sprintf("mcp__%s__%s", m.Server, m.Instead)
	}
	return l.pick(
		fmt.Sprintf("%s is turned off here: this agent runs inside vaultgate's boundary (vaultgate run), where the vault is not on its disk at all. Use %s: the vault's tools (mcp__%s__*) are the only way to the notes.", m.Tool, instead, m.Server),
		fmt.Sprintf("%s здесь отключён: агент работает внутри границы vaultgate (vaultgate run), и хранилища на его диске нет вовсе. Используйте %s: инструменты хранилища (mcp__%s__*) — единственный путь к заметкам.", m.Tool, instead, m.Server))
}
