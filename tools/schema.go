package tools

import (
	"encoding/json"

	"github.com/vaultgate/vaultgate/say"
	"github.com/vaultgate/vaultgate/zones"
)

// The output schemas of the tools that return structured content, as MCP's
// outputSchema declares them. Written out by hand (no reflection, no schema
// compiler at start-up); a test checks every structured result of a real
// call against its tool's schema.
//
// Some clients (Claude Code among them) show the model the structured
// content alone, never the text beside it, so whatever the text says
// besides the data — the zone legend, where a list or search stopped — is
// in the structured content too ("zones", "note").
var outputSchemas = map[string]json.RawMessage{
	"list": json.RawMessage(`{"type":"object","properties":{` +
		`"folder":{"type":"string","description":"the folder listed, vault-relative"},` +
		`"zone":{"type":"string","description":"the folder's zone"},` +
		`"zones":{"type":"object","additionalProperties":{"type":"string"},"description":"what each zone named here allows"},` +
		`"entries":{"type":"array","items":{"type":"object","properties":{` +
		`"path":{"type":"string"},"type":{"type":"string","enum":["file","folder","symlink","other"]},` +
		`"size":{"type":"integer","minimum":0},"zone":{"type":"string"}},"required":["path","type","zone"],"additionalProperties":false}},` +
		`"truncated":{"type":"boolean"},"note":{"type":"string"}},` +
		`"required":["folder","zone","zones","entries","truncated"],"additionalProperties":false}`),
	"search": json.RawMessage(`{"type":"object","properties":{` +
		`"matches":{"type":"array","items":{"type":"object","properties":{` +
		`"path":{"type":"string"},"line":{"type":"integer","minimum":1},"text":{"type":"string"}},"required":["path","line","text"],"additionalProperties":false}},` +
		`"truncated":{"type":"boolean"},"note":{"type":"string"}},` +
		`"required":["matches","truncated"],"additionalProperties":false}`),
	"bash": json.RawMessage(`{"type":"object","properties":{` +
		`"exit_code":{"type":"integer"},"stdout":{"type":"string"},"stderr":{"type":"string"},` +
		`"timed_out":{"type":"boolean"},"truncated":{"type":"boolean"},` +
		`"not_applied":{"type":"string","description":"why none of the command's changes reached the vault"}},` +
		`"required":["exit_code","stdout","stderr","timed_out","truncated"],"additionalProperties":false}`),
}

// OutputSchema is the JSON schema of the tool's structured content, or nil
// for a tool that returns text only.
func OutputSchema(tool string) json.RawMessage { return outputSchemas[tool] }

// zoneLegend says what each of the zones allows, in the set's language.
func (s *Set) zoneLegend(names ...string) map[string]string {
	legend := map[string]string{}
	for _, n := range names {
		if m, ok := zones.ParseMode(n); ok {
			legend[n] = s.say(say.ZoneAllows{Mode: m})
		}
	}
	return legend
}
