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
	// SkipBody lets Parse leave the content of the SOAP Body out of the
	// tree, for a caller that reads the headers and then only WithoutWSRM
	// or BodyContent (the receiver's path: issue #22, the Body is most of a
	// message's tree). The content is checked exactly as without it, so
	// every error, header and Fault is the same. What changes: when the
	// input takes the fast reader (any plain UTF-8 envelope), Body (and so
	// Doc) may have no children even though the input's Body has some;
	// WithoutWSRM returns the input's bytes less its wsrm blocks (and a
	// Header left empty) instead of the tree written anew, and BodyContent
	// the Body's content as it was written, each child element with the
	// namespace declarations in scope added as Standalone adds them. Both
	// are the same XML as without SkipBody (FuzzParseSkipBody), and hold
	// no reference to the input. The content is built anyway when its
	// first element is named Fault (decodeFault reads it) and when the
	// input needs etree's reader.
	SkipBody bool
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
