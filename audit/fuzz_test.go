package audit

import (
	"bytes"
	"errors"
	"os"
	"testing"
)

// FuzzReadVerify damages a good chained log with fuzzed bytes at a fuzzed
// place. Read and Verify must never panic, and Verify must call every real
// change of the log's bytes damage: nothing a fuzzer can insert forges a
// chain.
func FuzzReadVerify(f *testing.F) {
	f.Add(uint(0), []byte("x"))
	f.Add(uint(40), []byte("\n"))
	f.Add(uint(7), []byte(" "))
	f.Add(uint(1000), []byte(`{"seq":3,"prev":""}`+"\n"))
	f.Add(uint(3), []byte{0xff, 0xfe})
	f.Fuzz(func(t *testing.T, at uint, data []byte) {
		path := testPath(t)
		writeN(t, path, Options{}, 0, 4)
		good, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		at %= uint(len(good) + 1)
		damaged := append(append(append([]byte(nil), good[:at]...), data...), good[at:]...)
		if err := os.WriteFile(path, damaged, 0o600); err != nil {
			t.Fatal(err)
		}
		n := 0
		err = Read(path, func(Record) error { n++; return nil })
		var le *LineError
		if err != nil && !errors.As(err, &le) {
			t.Fatalf("Read: %v", err)
		}
		rep, err := Verify(path)
		if err != nil {
			t.Fatalf("Verify: %v", err)
		}
		if changed := !bytes.Equal(damaged, good); changed && rep.OK {
			t.Fatalf("inserting %q at byte %d went unnoticed: %s", data, at, rep)
		} else if !changed && !rep.OK {
			t.Fatalf("an untouched log does not verify: %s", rep)
		}
	})
}
