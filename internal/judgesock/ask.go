package judgesock

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// Ask sends the call to the judge on c and prints its answer. Once
// connected there is no going back to judging alone (the judge may have
// written the call's audit line and history): anything that goes wrong
// is an error, which denies.
func Ask(c *os.File, req Request, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	defer c.Close()
	// Unbounded, the hook would outlive Claude Code's timeout, which lets
	// the call through: no deadline, no asking.
	if err := c.SetDeadline(time.Now().Add(Budget)); err != nil {
		return 0, fmt.Errorf("asking the judge: %w", err)
	}
	w := bufio.NewWriterSize(c, 64<<10)
	w.Write(append(req.appendJSON(make([]byte, 0, 4<<10)), '\n'))
	n, err := io.Copy(w, io.LimitReader(stdin, MaxInput+1))
	if err != nil {
		return 0, fmt.Errorf("asking the judge: %w", err)
	}
	if n > MaxInput {
		return 0, fmt.Errorf("the hook input is over %d MiB", MaxInput>>20)
	}
	if err := w.Flush(); err != nil {
		return 0, fmt.Errorf("asking the judge: %w", err)
	}
	if err := CloseWrite(c); err != nil {
		return 0, fmt.Errorf("asking the judge: %w", err)
	}
	a, err := readAnswer(c)
	if err != nil {
		return 0, err
	}
	if a.Code != 0 && a.Code != 2 {
		return 0, fmt.Errorf("the judge answered exit %d", a.Code)
	}
	stderr.Write(a.Stderr)
	if len(a.Stdout) > 0 {
		if _, err := stdout.Write(a.Stdout); err != nil {
			return 0, fmt.Errorf("writing the answer: %w", err)
		}
	}
	return a.Code, nil
}

// AskExec hands exec's command to the judge on c and returns what exec is
// to print and exit with. The connection stays open while the command
// runs: closing it (exec killed, or interrupted) tells the judge to stop
// the command. Once sent there is no going back to running it here (the
// judge may have run it): anything that goes wrong is an error.
func AskExec(c *os.File, req Request) (Answer, error) { return AskExecSent(c, req, nil) }

// AskExecSent is AskExec, calling sent (if not nil) once the command is
// handed over: what the asker sets up while the judge runs the command
// (exec's signal handling) is then off the command's path.
func AskExecSent(c *os.File, req Request, sent func()) (Answer, error) {
	defer c.Close()
	if err := c.SetWriteDeadline(time.Now().Add(Budget)); err != nil {
		return Answer{}, fmt.Errorf("handing the command to the judge: %w", err)
	}
	if _, err := c.Write(append(req.appendJSON(make([]byte, 0, 4<<10)), '\n')); err != nil {
		return Answer{}, fmt.Errorf("handing the command to the judge: %w", err)
	}
	// The answer comes when the command has run, which the judge bounds
	// by its timeout; a judge that dies closes the connection.
	c.SetReadDeadline(time.Time{})
	if sent != nil {
		sent()
	}
	return readAnswer(c)
}

// readAnswer reads the judge's answer, one JSON object, and no further:
// the judge's work after it wrote the answer (ending the call's
// goroutines, closing the connection) is no longer waited for, which
// was up to a few milliseconds of a loaded machine's scheduling.
func readAnswer(c io.Reader) (Answer, error) {
	var a Answer
	err := json.NewDecoder(io.LimitReader(c, MaxAnswer)).Decode(&a)
	if err == io.EOF {
		err = errors.New("it closed the connection")
	}
	if err != nil {
		return Answer{}, fmt.Errorf("the judge gave no answer: %w", err)
	}
	return a, nil
}
