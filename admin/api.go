package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
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

// ParseFilter reads the panel's filters from a query: session, tool,
// decision, path and since, as the CLI's flags of the same names.
func ParseFilter(q url.Values, now time.Time) (audit.Filter, error) {
	f := audit.Filter{Session: q.Get("session"), Tool: q.Get("tool"), Decision: q.Get("decision"), Path: q.Get("path")}
	switch f.Decision {
	case "", "allow", "deny", "error":
	default:
		return audit.Filter{}, fmt.Errorf("decision %q: want allow, deny or error", f.Decision)
	}
	since, err := audit.ParseSince(q.Get("since"), now)
	if err != nil {
		return audit.Filter{}, err
	}
	f.Since = since
	return f, nil
}

// RecordsPage is the answer of /api/records: the latest matching records,
// newest last, and the seq of the last line of the log, to follow on from.
type RecordsPage struct {
	Records []audit.Record `json:"records"`
	LastSeq int64          `json:"last_seq"`
	// Damaged names the first line that is not a record, if any.
	Damaged string `json:"damaged,omitempty"`
}

func (s *Server) records(w http.ResponseWriter, r *http.Request) {
	f, err := ParseFilter(r.URL.Query(), s.opt.Now())
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	limit := defaultLimit
	if v := r.URL.Query().Get("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit < 0 || limit > maxLimit {
			httpError(w, http.StatusBadRequest, fmt.Sprintf("limit: want 0 to %d", maxLimit))
			return
		}
	}
	page := RecordsPage{Records: []audit.Record{}}
	err = audit.Read(s.opt.Log, func(rec audit.Record) error {
		page.LastSeq = max(page.LastSeq, rec.Seq)
		if limit > 0 && f.Match(&rec) {
			if len(page.Records) == limit {
				page.Records = append(page.Records[:0], page.Records[1:]...)
			}
			page.Records = append(page.Records, rec)
		}
		return nil
	})
	if !s.readOK(w, err, &page.Damaged) {
		return
	}
	writeJSON(w, page)
}

// readOK sorts a Read error: a damaged line is reported beside the data,
// a log not written yet is an empty one, anything else is a failure.
func (s *Server) readOK(w http.ResponseWriter, err error, damaged *string) bool {
	var le *audit.LineError
	switch {
	case err == nil, errors.Is(err, fs.ErrNotExist):
		return true
	case errors.As(err, &le):
		*damaged = le.Error()
		return true
	}
	httpError(w, http.StatusInternalServerError, "could not read the audit log")
	return false
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
	f, err := ParseFilter(r.URL.Query(), s.opt.Now())
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	// Count per minute while reading; the chart's buckets are made from
	// the minutes afterwards, once the span is known.
	type tally struct{ calls, denies int }
	minutes := map[int64]*tally{}
	var page StatsPage
	page.Stats = audit.Summarise(func(yield func(audit.Record) bool) {
		err = audit.Read(s.opt.Log, func(rec audit.Record) error {
			if !f.Match(&rec) {
				return nil
			}
			m := rec.Time.Unix() / 60
			t := minutes[m]
			if t == nil {
				t = &tally{}
				minutes[m] = t
			}
			t.calls++
			if rec.Decision == "deny" {
				t.denies++
			}
			if !yield(rec) {
				return errors.New("stopped")
			}
			return nil
		})
	})
	if !s.readOK(w, err, &page.Damaged) {
		return
	}
	page.Series = []Bucket{}
	if page.Calls > 0 {
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
		for m, t := range minutes {
			i := int(time.Unix(m*60, 0).Sub(start) / size)
			if i >= 0 && i < n {
				page.Series[i].Calls += t.calls
				page.Series[i].Denies += t.denies
			}
		}
		page.BucketSeconds = int64(size / time.Second)
	}
	writeJSON(w, page)
}

// events streams the matching records appended from seq "from" on (0 or
// absent: only new ones) as server-sent events: "id" is the seq, "data"
// the record as JSON. The page reads it with fetch, so that it can send
// the token as a header.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	f, err := ParseFilter(r.URL.Query(), s.opt.Now())
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
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
		if !f.Match(&rec) {
			return nil
		}
		b, err := json.Marshal(rec)
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
