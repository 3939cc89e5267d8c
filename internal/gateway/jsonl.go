package gateway

import (
	"bufio"
	"encoding/json"
	"os"
)

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
