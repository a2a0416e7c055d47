package tools

import (
	"bufio"
	"io"
)

// maxLine bounds one line in memory; a longer line is cut (read and
// search only need its head).
const maxLine = 1 << 20

// lineReader yields lines with their endings, bounded in length.
type lineReader struct {
	r   *bufio.Reader
	buf []byte
}

func newLineReader(r io.Reader) *lineReader {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 64<<10)
	}
	return &lineReader{r: br}
}

// next returns the next line (with its newline if it had one). The slice is
// valid until the next call. err is io.EOF after the last line.
func (l *lineReader) next() ([]byte, error) {
	l.buf = l.buf[:0]
	for {
		chunk, err := l.r.ReadSlice('\n')
		if len(l.buf)+len(chunk) <= maxLine {
			l.buf = append(l.buf, chunk...)
		}
		switch err {
		case bufio.ErrBufferFull:
			continue
		case nil:
			return l.buf, nil
		default:
			return l.buf, err
		}
	}
}
