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
	s.ix.mu.Lock()
	if err := s.ix.refresh(); err != nil {
		s.ix.mu.Unlock()
		httpError(w, http.StatusInternalServerError, "could not read the audit log")
		return nil, nil, false
	}
	return compile(q), s.ix.mu.Unlock, true
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
			if e := &ix.entries[i]; ix.match(m, &e.summary, ix.text(e)) {
				page.Matched++
				if len(picked) < limit {
					picked = append(picked, i)
				}
			}
		}
	} else {
		for i := len(ix.entries) - 1; i >= 0; i-- {
			if e := &ix.entries[i]; ix.match(m, &e.summary, ix.text(e)) {
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
		rec, err := ix.record(e)
		if err != nil {
			httpError(w, http.StatusInternalServerError, "could not read the audit log")
			return
		}
		page.Records = append(page.Records, rowOf(rec, &e.summary))
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
		e := &ix.entries[i]
		if !ix.match(m, &e.summary, ix.text(e)) {
			continue
		}
		// The hook's line after Claude Code ran a tool is part of its
		// call: it counts only when it says the call failed.
		if e.after && !e.failed {
			continue
		}
		cs := []*audit.Count{&st.Count, counts(st.ByTool, e.tool), counts(st.BySession, e.session), counts(st.ByAgent, e.agent)}
		for _, c := range cs {
			if !e.after {
				c.Calls++
				switch e.decision {
				case decDeny:
					c.Denies++
				case decError, decOther:
					c.Errors++
				}
			}
			if e.failed {
				c.Failed++
			}
		}
		if e.after {
			continue
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

	var mu sync.Mutex // Follow's callback and the heartbeat both write
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
	audit.Follow(ctx, s.opt.Log, from, func(rec audit.Record) error {
		row, ok := s.ix.matchRecord(m, rec)
		if !ok {
			return nil
		}
		b, err := json.Marshal(row)
		if err != nil {
			return err
		}
		// JSON has no raw newline, so the record is one data line.
		return send(fmt.Appendf(nil, "id: %d\nevent: record\ndata: %s\n\n", rec.Seq, b))
	})
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
