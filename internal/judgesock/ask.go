package judgesock

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// Ask sends the call to the judge on c and prints its answer. Once
// connected there is no going back to judging alone (the judge may have
// written the call's audit line and history): anything that goes wrong
// is an error, which denies.
func Ask(c *os.File, req Request, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	defer c.Close()
	head, err := json.Marshal(req)
	if err != nil {
		return 0, err
	}
	w := bufio.NewWriterSize(c, 64<<10)
	w.Write(append(head, '\n'))
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
	reply, err := io.ReadAll(io.LimitReader(c, MaxAnswer))
	if err != nil {
		return 0, fmt.Errorf("the judge's answer: %w", err)
	}
	var a Answer
	if err := json.Unmarshal(reply, &a); err != nil {
		if len(reply) == 0 {
			err = errors.New("it closed the connection")
		}
		return 0, fmt.Errorf("the judge gave no answer: %w", err)
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
func AskExec(c *os.File, req Request) (Answer, error) {
	defer c.Close()
	head, err := json.Marshal(req)
	if err != nil {
		return Answer{}, err
	}
	if _, err := c.Write(append(head, '\n')); err != nil {
		return Answer{}, fmt.Errorf("handing the command to the judge: %w", err)
	}
	reply, err := io.ReadAll(io.LimitReader(c, MaxAnswer))
	if err != nil {
		return Answer{}, fmt.Errorf("the judge's answer: %w", err)
	}
	var a Answer
	if err := json.Unmarshal(reply, &a); err != nil {
		if len(reply) == 0 {
			err = errors.New("it closed the connection")
		}
		return Answer{}, fmt.Errorf("the judge gave no answer: %w", err)
	}
	return a, nil
}
