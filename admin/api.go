package admin

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/vaultgate/vaultgate/audit"
)

// Limits on what one request may ask for.
const (
	defaultLimit = 500
	maxLimit     = 5000
	maxBuckets   = 60
)

// RecordsPage is the answer of /api/records: the matching records, in
// the log's order (the latest ones, or with order=first the first ones),
// how many match in all, and the seq of the last line of the log, to
// follow on from.
type RecordsPage struct {
	Records []Row `json:"records"`
	Matched int   `json:"matched"`
	LastSeq int64 `json:"last_seq"`
	// Damaged names the first line that is not a record, if any.
	Damaged string `json:"damaged,omitempty"`
}

// query reads the request's filters and brings the index up to date; on
// success the caller holds s.ix.mu and must call the returned unlock.
func (s *Server) query(w http.ResponseWriter, r *http.Request) (*matcher, func(), bool) {
	q, err := ParseQuery(r.URL.Query(), s.opt.Now())
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return nil, nil, false
	}
	m := compile(q)
	if !s.scope(w, m) {
		return nil, nil, false
	}
	s.ix.mu.Lock()
	if err := s.ix.refresh(); err != nil {
		s.ix.mu.Unlock()
		httpError(w, http.StatusInternalServerError, "could not read the audit log")
		return nil, nil, false
	}
	return m, s.ix.mu.Unlock, true
}

// scope holds m to the panel's vault (Options.Scope); on an error it
// answers the request and returns false.
func (s *Server) scope(w http.ResponseWriter, m *matcher) bool {
	if s.opt.Scope == nil {
		return true
	}
	sc, err := s.opt.Scope()
	if err != nil {
		httpError(w, http.StatusInternalServerError, "could not tell this vault's lines from another's")
		return false
	}
	m.scope, m.scoped = sc, true
	return true
}

func (s *Server) damaged() string {
	if s.ix.damaged == nil {
		return ""
	}
	return s.ix.damaged.Error()
}

func (s *Server) records(w http.ResponseWriter, r *http.Request) {
	limit := defaultLimit
	if v := r.URL.Query().Get("limit"); v != "" {
		var err error
		if limit, err = strconv.Atoi(v); err != nil || limit < 0 || limit > maxLimit {
			httpError(w, http.StatusBadRequest, fmt.Sprintf("limit: want 0 to %d", maxLimit))
			return
		}
	}
	first := false
	switch r.URL.Query().Get("order") {
	case "", "latest":
	case "first":
		first = true
	default:
		httpError(w, http.StatusBadRequest, "order: want latest or first")
		return
	}
	m, unlock, ok := s.query(w, r)
	if !ok {
		return
	}
	defer unlock()
	ix := s.ix
	page := RecordsPage{Records: []Row{}, LastSeq: ix.lastSeq, Damaged: s.damaged()}
	var picked []int
	if first {
		for i := range ix.entries {
			if ix.matchEntry(m, &ix.entries[i]) {
				page.Matched++
				if len(picked) < limit {
					picked = append(picked, i)
				}
			}
		}
	} else {
		for i := len(ix.entries) - 1; i >= 0; i-- {
			if ix.matchEntry(m, &ix.entries[i]) {
				page.Matched++
				if len(picked) < limit {
					picked = append(picked, i)
				}
			}
		}
		slices.Reverse(picked)
	}
	for _, i := range picked {
		e := &ix.entries[i]
		c, err := ix.call(e)
		if err != nil {
			httpError(w, http.StatusInternalServerError, "could not read the audit log")
			return
		}
		page.Records = append(page.Records, rowOf(c, &e.summary))
	}
	writeJSON(w, page)
}

// Bucket is one stretch of time in the chart.
type Bucket struct {
	Start  time.Time `json:"start"`
	Calls  int       `json:"calls"`
	Denies int       `json:"denies"`
}

// StatsPage is the answer of /api/stats.
type StatsPage struct {
	audit.Stats
	BucketSeconds int64    `json:"bucket_seconds"`
	Series        []Bucket `json:"series"`
	Damaged       string   `json:"damaged,omitempty"`
}

// bucketSizes are the steps the chart may use, smallest first.
var bucketSizes = []time.Duration{
	time.Minute, 5 * time.Minute, 15 * time.Minute, time.Hour, 6 * time.Hour, 24 * time.Hour, 7 * 24 * time.Hour,
}

func (s *Server) stats(w http.ResponseWriter, r *http.Request) {
	m, unlock, ok := s.query(w, r)
	if !ok {
		return
	}
	defer unlock()
	ix := s.ix
	// Count per minute while reading; the chart's buckets are made from
	// the minutes afterwards, once the span is known.
	type tally struct{ calls, denies int }
	minutes := map[int64]*tally{}
	page := StatsPage{Damaged: s.damaged()}
	st := &page.Stats
	st.ByDecision, st.ByRule = map[string]int{}, map[string]int{}
	st.ByTool, st.BySession, st.ByAgent = map[string]*audit.Count{}, map[string]*audit.Count{}, map[string]*audit.Count{}
	counts := func(by map[string]*audit.Count, id uint32) *audit.Count {
		k := ix.strs.name(id)
		c := by[k]
		if c == nil {
			c = &audit.Count{}
			by[k] = c
		}
		return c
	}
	var first, last int64
	any := false
	for i := range ix.entries {
		// One entry is one call: the lines that continue it (exec's, the
		// hook's after line) are its parts, counted with it (audit.Joiner),
		// so these are audit stats' numbers.
		e := &ix.entries[i]
		if !ix.matchEntry(m, e) {
			continue
		}
		cs := []*audit.Count{&st.Count, counts(st.ByTool, e.tool), counts(st.BySession, e.session), counts(st.ByAgent, e.agent)}
		for _, c := range cs {
			c.Calls++
			switch e.decision {
			case decDeny:
				c.Denies++
			case decError, decOther:
				c.Errors++
			}
			if e.failed {
				c.Failed++
			}
		}
		st.ByDecision[decisionName(e.decision)]++
		if e.decision == decDeny {
			st.ByRule[cmp.Or(ix.strs.name(e.rule), audit.NoRule)]++
		}
		if !any || e.ms < first {
			first = e.ms
		}
		if !any || e.ms > last {
			last = e.ms
		}
		any = true
		mn := e.ms / 60000
		t := minutes[mn]
		if t == nil {
			t = &tally{}
			minutes[mn] = t
		}
		t.calls++
		if e.decision == decDeny {
			t.denies++
		}
	}
	page.Series = []Bucket{}
	if any {
		page.First, page.Last = time.UnixMilli(first).UTC(), time.UnixMilli(last).UTC()
		first, last := page.First.Truncate(time.Minute), page.Last
		size := bucketSizes[len(bucketSizes)-1]
		for _, b := range bucketSizes {
			if last.Sub(first)/b < maxBuckets {
				size = b
				break
			}
		}
		start := first.Truncate(size)
		n := int(last.Sub(start)/size) + 1
		page.Series = make([]Bucket, n)
		for i := range page.Series {
			page.Series[i].Start = start.Add(time.Duration(i) * size).UTC()
		}
		for mn, t := range minutes {
			i := int(time.Unix(mn*60, 0).Sub(start) / size)
			if i >= 0 && i < n {
				page.Series[i].Calls += t.calls
				page.Series[i].Denies += t.denies
			}
		}
		page.BucketSeconds = int64(size / time.Second)
	}
	writeJSON(w, page)
}

func decisionName(d uint8) string {
	switch d {
	case decAllow:
		return "allow"
	case decDeny:
		return "deny"
	}
	return "error"
}

// events streams the matching records appended from seq "from" on (0 or
// absent: only new ones) as server-sent events: "id" is the seq, "data"
// the record as JSON. The page reads it with fetch, so that it can send
// the token as a header.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	q, err := ParseQuery(r.URL.Query(), s.opt.Now())
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	m := compile(q)
	if !s.scope(w, m) {
		return
	}
	var from int64
	if v := r.URL.Query().Get("from"); v != "" {
		if from, err = strconv.ParseInt(v, 10, 64); err != nil || from < 0 {
			httpError(w, http.StatusBadRequest, "from: want a seq, 0 or more")
			return
		}
	}
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return // the headers say it all; a HEAD must not hang on a stream
	}

	var mu sync.Mutex // the stream and the heartbeat both write
	closed := false   // the handler has returned: w is not ours any more
	send := func(chunk []byte) error {
		mu.Lock()
		defer mu.Unlock()
		if closed {
			return http.ErrHandlerTimeout
		}
		rc.SetWriteDeadline(time.Now().Add(30 * time.Second))
		if _, err := w.Write(chunk); err != nil {
			return err
		}
		return rc.Flush()
	}
	if err := send([]byte(": vaultgate audit stream\nretry: 2000\n\n")); err != nil {
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	var beat sync.WaitGroup
	defer func() {
		cancel()
		beat.Wait()
		mu.Lock()
		closed = true
		mu.Unlock()
	}()
	beat.Add(1)
	go func() {
		defer beat.Done()
		t := time.NewTicker(s.opt.Heartbeat)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if send([]byte(": ping\n\n")) != nil {
					return
				}
			}
		}
	}()
	tick := time.NewTicker(streamPoll)
	defer tick.Stop()
	for next := from; ; {
		chunk, err := s.streamChunk(m, &next)
		if len(chunk) > 0 && send(chunk) != nil || err != nil {
			return // the page reconnects from the last id it was sent
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// streamPoll is how often the live stream looks for new lines.
var streamPoll = 200 * time.Millisecond

// streamChunk brings the index up to date and returns the events for its
// lines from seq *next on, moving *next past them. The stream is the
// index's, so its calls are the ones the records and the counts show: for
// each line, in the log's order, the call it opened, or the call it
// continues (exec's line, the hook's after line: audit.Joiner), sent again
// whole, when that call passes m. An event's id is its line's seq, to
// follow on from; its data is the call's Row, whose seq is the call's own
// line's, so a call sent again replaces its row. *next 0 starts after the
// log's last line.
func (s *Server) streamChunk(m *matcher, next *int64) ([]byte, error) {
	ix := s.ix
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if err := ix.refresh(); err != nil {
		return nil, err
	}
	if *next == 0 {
		*next = ix.lastSeq + 1
		return nil, nil
	}
	i := len(ix.entries)
	for i > 0 && ix.entries[i-1].seq >= *next {
		i--
	}
	var out []byte
	for ; i < len(ix.entries); i++ {
		e := &ix.entries[i]
		*next = max(*next, e.seq+1)
		ce := e
		if e.part {
			ce = &ix.entries[e.link[0]-1]
		}
		if !ix.matchEntry(m, ce) {
			continue
		}
		c, err := ix.call(ce)
		if err != nil {
			return out, err
		}
		b, err := json.Marshal(rowOf(c, &ce.summary))
		if err != nil {
			return out, err
		}
		// JSON has no raw newline, so the call is one data line.
		out = fmt.Appendf(out, "id: %d\nevent: record\ndata: %s\n\n", e.seq, b)
	}
	return out, nil
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		httpError(w, http.StatusInternalServerError, "could not encode the answer")
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Write(append(b, '\n'))
}
