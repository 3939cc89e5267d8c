package gateway

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
)

// jsonlFile is the JSON-lines file a bounded table of the gateway lives in
// (the outcome records, the idempotency keys): read whole at open
// (readJSONL), then appended to and synced per change, and rewritten from
// the table once it holds twice the table's bound in lines.
type jsonlFile struct {
	f     *os.File // nil: memory only, or closed
	lines int      // lines in f, for compaction
}

// readJSONL calls each with every line of the file at path, none when
// there is no file; a line longer than maxLine ends the reading.
func readJSONL(path string, maxLine int, each func(line []byte)) error {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, maxLine)
	for sc.Scan() {
		each(sc.Bytes())
	}
	return nil
}

// rewrite replaces the file at path by the lines each puts (rewriteJSONL).
func (j *jsonlFile) rewrite(path string, each func(put func(v any))) error {
	f, n, err := rewriteJSONL(path, j.f, each)
	j.f = f
	if err == nil {
		j.lines = n
	}
	return err
}

// append writes buf, n lines, and syncs it; when the file would reach
// 2*max lines, compact rewrites it from the table instead. what names the
// lines in an error.
func (j *jsonlFile) append(buf []byte, n, max int, compact func(path string) error, what string) error {
	if j.f == nil {
		return nil
	}
	if j.lines+n >= 2*max {
		return compact(j.f.Name())
	}
	if _, err := j.f.Write(buf); err != nil {
		return fmt.Errorf("writing %s: %w", what, err)
	}
	j.lines += n
	return j.f.Sync()
}

func (j *jsonlFile) close() error {
	if j.f == nil {
		return nil
	}
	err := j.f.Close()
	j.f = nil
	return err
}

// rewriteJSONL replaces the JSON-lines file at path by the values each
// hands out, one per line, synced, by an atomic rename; it returns the new
// file opened for appending and the lines written. old, if open, is
// closed once the new file is in place.
func rewriteJSONL(path string, old *os.File, each func(put func(v any))) (*os.File, int, error) {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return old, 0, err
	}
	w := bufio.NewWriter(f)
	n := 0
	each(func(v any) {
		b, _ := json.Marshal(v)
		w.Write(append(b, '\n'))
		n++
	})
	if err := w.Flush(); err != nil {
		f.Close()
		return old, 0, err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return old, 0, err
	}
	f.Close()
	if err := os.Rename(tmp, path); err != nil {
		return old, 0, err
	}
	if old != nil {
		old.Close()
	}
	nf, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o644)
	return nf, n, err
}
