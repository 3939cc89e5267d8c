package rmp_test

import (
	"os"
	"strings"
	"testing"
)

// TestREADMEEmbeddingIsExampleOpen: the README's embedding snippet is
// ExampleOpen's, so it compiles against today's API and runs.
func TestREADMEEmbeddingIsExampleOpen(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	example, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	s := string(readme)
	i := strings.Index(s, "## Embedding")
	j := strings.Index(s[max(i, 0):], "```go\n")
	if i < 0 || j < 0 {
		t.Fatal("README.md has no ```go block under ## Embedding")
	}
	snippet := s[i+j+len("```go\n"):]
	snippet = snippet[:strings.Index(snippet, "```")]

	e := string(example)
	_, body, ok := strings.Cut(e[strings.Index(e, "func ExampleOpen"):], "\t// README\n")
	body, _, ok2 := strings.Cut(body, "\t// README\n")
	if !ok || !ok2 {
		t.Fatal("ExampleOpen has no code between two // README lines")
	}
	var code []string
	for _, l := range strings.SplitAfter(body, "\n") {
		code = append(code, strings.TrimPrefix(l, "\t"))
	}
	if got := strings.Join(code, ""); got != snippet {
		t.Errorf("README.md's embedding snippet differs from ExampleOpen's:\nREADME:\n%s\nExampleOpen:\n%s", snippet, got)
	}
}
