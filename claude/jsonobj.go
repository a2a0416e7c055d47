package claude

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// jsonObj is a JSON object that keeps its keys in their order and the
// values it is not asked about byte for byte, so init can change its own
// entries in a person's .mcp.json or settings.json and leave the rest as
// they wrote it.
type jsonObj struct {
	keys []string
	vals map[string]json.RawMessage
}

func newObj() *jsonObj { return &jsonObj{vals: map[string]json.RawMessage{}} }

// parseObj reads a JSON object; a file of only white space is an empty one.
func parseObj(b []byte) (*jsonObj, error) {
	o := newObj()
	if len(bytes.TrimSpace(b)) == 0 {
		return o, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("%q: %w", k, err)
		}
		o.set(k, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("text after the JSON object")
	}
	return o, nil
}

func (o *jsonObj) has(k string) bool { _, ok := o.vals[k]; return ok }

func (o *jsonObj) set(k string, v json.RawMessage) {
	if !o.has(k) {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

// setValue sets k to v marshalled.
func (o *jsonObj) setValue(k string, v any) {
	b, _ := json.Marshal(v)
	o.set(k, b)
}

func (o *jsonObj) del(k string) {
	if !o.has(k) {
		return
	}
	delete(o.vals, k)
	for i, x := range o.keys {
		if x == k {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			break
		}
	}
}

// obj returns the object at k, an empty one if k is absent; an error if k
// holds something else.
func (o *jsonObj) obj(k string) (*jsonObj, error) {
	v, ok := o.vals[k]
	if !ok || string(bytes.TrimSpace(v)) == "null" {
		return newObj(), nil
	}
	sub, err := parseObj(v)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", k, err)
	}
	return sub, nil
}

// list returns the array at k, empty if absent.
func (o *jsonObj) list(k string) ([]json.RawMessage, error) {
	v, ok := o.vals[k]
	if !ok || string(bytes.TrimSpace(v)) == "null" {
		return nil, nil
	}
	var l []json.RawMessage
	if err := json.Unmarshal(v, &l); err != nil {
		return nil, fmt.Errorf("%q is not an array", k)
	}
	return l, nil
}

// setObj puts sub at k, or removes k when sub is empty and drop is set.
func (o *jsonObj) setObj(k string, sub *jsonObj, drop bool) {
	if drop && len(sub.keys) == 0 {
		o.del(k)
		return
	}
	o.set(k, sub.bytes())
}

// setList puts l at k, or removes k when l is empty and drop is set.
func (o *jsonObj) setList(k string, l []json.RawMessage, drop bool) {
	if drop && len(l) == 0 {
		o.del(k)
		return
	}
	if l == nil {
		l = []json.RawMessage{}
	}
	b, _ := json.Marshal(l)
	o.set(k, b)
}

func (o *jsonObj) bytes() []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(o.vals[k])
	}
	b.WriteByte('}')
	return b.Bytes()
}

// indented is the object as a file: two-space indents, a final newline.
func (o *jsonObj) indented() []byte {
	var b bytes.Buffer
	if err := json.Indent(&b, o.bytes(), "", "  "); err != nil {
		return append(o.bytes(), '\n')
	}
	b.WriteByte('\n')
	return b.Bytes()
}
