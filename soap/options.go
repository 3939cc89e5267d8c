package soap

// Default limits of ParseOptions.
const (
	DefaultMaxBytes      = 4 << 20
	DefaultMaxDepth      = 64
	DefaultMaxIDLength   = 2048
	DefaultMaxEntries    = 10000
	DefaultMaxAttributes = 128
	DefaultMaxElements   = 10000
)

// ParseOptions bounds what Parse accepts. A zero or negative field means its
// default; every limit is enforced and refused with InvalidRequest (or
// InvalidPollRequest inside a PollRequest) and a "soap.limit.*" rule.
type ParseOptions struct {
	// MaxBytes is the largest envelope accepted (default 4 MiB).
	MaxBytes int
	// MaxDepth is the deepest element nesting accepted, the Envelope being
	// depth 1 (default 64).
	MaxDepth int
	// MaxIDLength bounds groupId, BareURI and reference-scheme lengths in
	// bytes (default 2048).
	MaxIDLength int
	// MaxEntries bounds the replies plus ranges of one Response, and the
	// RefToMessageIds plus ranges of one PollRequest (default 10000).
	MaxEntries int
	// MaxAttributes bounds the attributes (namespace declarations included)
	// of any one element (default 128).
	MaxAttributes int
	// MaxElements bounds the elements, comments and CDATA sections of one
	// envelope (default 10000). It is checked while reading, before the
	// document is built past it: a small body of many tiny elements would
	// otherwise cost about 40 times its size in memory (issue 18).
	MaxElements int
}

// withDefaults returns o with every unset limit at its default.
func (o ParseOptions) withDefaults() ParseOptions {
	o.MaxBytes = orDefault(o.MaxBytes, DefaultMaxBytes)
	o.MaxDepth = orDefault(o.MaxDepth, DefaultMaxDepth)
	o.MaxIDLength = orDefault(o.MaxIDLength, DefaultMaxIDLength)
	o.MaxEntries = orDefault(o.MaxEntries, DefaultMaxEntries)
	o.MaxAttributes = orDefault(o.MaxAttributes, DefaultMaxAttributes)
	o.MaxElements = orDefault(o.MaxElements, DefaultMaxElements)
	return o
}

// orDefault is v, or d when v is unset (zero or negative).
func orDefault(v, d int) int {
	if v <= 0 {
		return d
	}
	return v
}
