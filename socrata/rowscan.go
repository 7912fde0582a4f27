package socrata

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// rowScanner splits a JSON array of objects into its elements in one pass
// over the bytes, without decoding them: it tracks strings and nesting to
// find where each element ends, drops the white space between tokens (so a
// row is always one line), and checks the element with json.Valid.
type rowScanner struct {
	br      *bufio.Reader
	started bool // '[' read
	rows    int  // elements returned so far
	stack   []byte
}

func newRowScanner(br *bufio.Reader) *rowScanner { return &rowScanner{br: br} }

// next returns the next element of the array as a fresh slice, or io.EOF
// after the closing ']'. A body that ends early gives io.ErrUnexpectedEOF;
// one that is not an array of objects gives a *shapeError or a
// *json.SyntaxError.
func (s *rowScanner) next() ([]byte, error) {
	if !s.started {
		b, err := s.token()
		if err != nil {
			return nil, err
		}
		if b != '[' {
			return nil, &shapeError{fmt.Sprintf("expected a JSON array of rows, got %q", b)}
		}
		s.started = true
	}
	b, err := s.token()
	if err != nil {
		return nil, err
	}
	if b == ']' {
		return nil, s.end()
	}
	if s.rows > 0 {
		if b != ',' {
			return nil, &shapeError{fmt.Sprintf("expected ',' or ']' after row %d, got %q", s.rows, b)}
		}
		if b, err = s.token(); err != nil {
			return nil, err
		}
	}
	if b != '{' {
		return nil, &shapeError{fmt.Sprintf("row %d is not a JSON object: it starts with %q", s.rows+1, b)}
	}
	row, err := s.object()
	if err != nil {
		return nil, err
	}
	if !json.Valid(row) {
		var v any
		err := json.Unmarshal(row, &v) // for the syntax error's text
		if err == nil {
			err = errors.New("invalid JSON")
		}
		return nil, &shapeError{fmt.Sprintf("row %d is not valid JSON: %v", s.rows+1, err)}
	}
	s.rows++
	return row, nil
}

// end checks that only white space follows the closing ']' and returns
// io.EOF, or a shapeError.
func (s *rowScanner) end() error {
	for {
		b, err := s.br.ReadByte()
		if err == io.EOF {
			return io.EOF
		}
		if err != nil {
			return err
		}
		if !isSpace(b) {
			return &shapeError{fmt.Sprintf("unexpected %q after the end of the row array", b)}
		}
	}
}

// token consumes white space and returns the next byte, consumed too.
func (s *rowScanner) token() (byte, error) {
	for {
		b, err := s.br.ReadByte()
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
		if !isSpace(b) {
			return b, nil
		}
	}
}

// isLiteral reports whether b can be part of a number, true, false or null.
func isLiteral(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '-' || b == '+' || b == '.'
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\r' || b == '\n' }

// object reads an object whose '{' was just consumed, up to its matching
// '}', and returns it without the white space outside strings.
func (s *rowScanner) object() ([]byte, error) {
	out := make([]byte, 1, 512)
	out[0] = '{'
	s.stack = append(s.stack[:0], '}')
	inString, escaped := false, false
	// gap: white space was dropped since last, the previous byte outside a
	// string. Dropping it must not join two literals ("tr ue", "1 2").
	gap, last := false, byte('{')
	for {
		buf, err := s.br.Peek(max(s.br.Buffered(), 1))
		if len(buf) == 0 {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		start := 0
		for i := 0; i < len(buf); i++ {
			c := buf[i]
			if inString {
				switch {
				case escaped:
					escaped = false
				case c == '\\':
					escaped = true
				case c == '"':
					inString = false
				default:
					// Nothing but a quote or a backslash matters inside a
					// string: skip to the byte before the next one.
					if k := bytes.IndexAny(buf[i:], `"\`); k < 0 {
						i = len(buf) - 1
					} else {
						i += k - 1
					}
				}
				continue
			}
			if isSpace(c) {
				out = append(out, buf[start:i]...)
				start = i + 1
				gap = true
				continue
			}
			if gap && isLiteral(c) && isLiteral(last) {
				return nil, &shapeError{fmt.Sprintf("row %d is not valid JSON: white space inside a literal", s.rows+1)}
			}
			gap, last = false, c
			switch c {
			case '"':
				inString = true
			case '{', '[':
				if len(s.stack) >= maxRowDepth {
					return nil, &shapeError{fmt.Sprintf("row %d nests deeper than %d levels: no Socrata row does", s.rows+1, maxRowDepth)}
				}
				s.stack = append(s.stack, c+2) // '{'+2 is '}', '['+2 is ']'
			case '}', ']':
				want := s.stack[len(s.stack)-1]
				if c != want {
					return nil, &shapeError{fmt.Sprintf("row %d: %q where %q was expected", s.rows+1, c, want)}
				}
				s.stack = s.stack[:len(s.stack)-1]
				if len(s.stack) == 0 {
					out = append(out, buf[start:i+1]...)
					_, _ = s.br.Discard(i + 1)
					return out, nil
				}
			}
		}
		out = append(out, buf[start:]...)
		_, _ = s.br.Discard(len(buf))
		if len(out) > maxRowBytes {
			return nil, &shapeError{fmt.Sprintf("row %d is larger than %d MiB: the reader stops there rather than hold it", s.rows+1, maxRowBytes>>20)}
		}
	}
}

// A row is bounded in bytes and in depth, whatever the portal sends: a
// broken or hostile answer must not make the server hold one value of
// gigabytes. DataSF's widest rows (a parcel's polygon) are a few hundred
// KB; the offline portal bounds its rows at 4 MiB.
const (
	maxRowBytes = 16 << 20
	maxRowDepth = 64
)
