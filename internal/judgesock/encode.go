package judgesock

import (
	"slices"
	"strconv"

	"github.com/vaultgate/vaultgate/internal/jsonstr"
)

// The request is written by a process that starts for it (the hook, exec),
// where encoding/json's first Marshal — its reflection over the types, the
// code it pages in — took 0.15 ms of a Bash's wait. appendJSON writes the
// very bytes json.Marshal writes (TestAppendJSONIsMarshal, FuzzAppendJSON
// hold them equal), without reflection. The judge reads them with
// encoding/json as before.

// appendJSON appends r as json.Marshal encodes it.
func (r *Request) appendJSON(b []byte) []byte {
	b = append(b, `{"config":`...)
	b = appendString(b, r.Config)
	b = append(b, `,"digest":`...)
	b = appendString(b, r.Digest)
	b = append(b, `,"agent":`...)
	b = appendString(b, r.Agent)
	b = append(b, `,"exec":`...)
	b = appendString(b, r.Exec)
	if r.ExecProblem != "" {
		b = append(b, `,"exec_problem":`...)
		b = appendString(b, r.ExecProblem)
	}
	b = append(b, `,"env":`...)
	if r.Env == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '{')
		keys := make([]string, 0, len(r.Env))
		for k := range r.Env {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			b = appendString(b, r.Env[k])
		}
		b = append(b, '}')
	}
	if r.Run != nil {
		b = append(b, `,"run":`...)
		b = r.Run.appendJSON(b)
	}
	return append(b, '}')
}

// appendJSON appends c as json.Marshal encodes it.
func (c *ExecCall) appendJSON(b []byte) []byte {
	b = append(b, '{')
	if c.CallID != "" {
		b = append(b, `"call_id":`...)
		b = appendString(b, c.CallID)
		b = append(b, ',')
	}
	if c.Label != "" {
		b = append(b, `"label":`...)
		b = appendString(b, c.Label)
		b = append(b, ',')
	}
	b = append(b, `"cwd":`...)
	b = appendString(b, c.Cwd)
	b = append(b, `,"command":`...)
	b = appendString(b, c.Command)
	if c.Timeout != 0 {
		b = append(b, `,"timeout":`...)
		b = strconv.AppendInt(b, int64(c.Timeout), 10)
	}
	b = append(b, `,"environ":`...)
	if c.Environ == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, e := range c.Environ {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, e)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// appendString appends s as a JSON string, escaped as encoding/json
// escapes it, so that the request is what json.Marshal would write.
func appendString(b []byte, s string) []byte { return jsonstr.Append(b, s, jsonstr.AsMarshal) }
