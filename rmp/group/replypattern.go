package group

// ReplyPattern is how RM-Replies about a message travel back (digest §8):
// in the HTTP response of the same request, POSTed to ReplyTo, or in answer
// to the sender's PollRequests.
type ReplyPattern uint8

const (
	ReplyResponse ReplyPattern = iota + 1
	ReplyCallback
	ReplyPoll
)

// String returns the wire value of ReplyPattern/Value.
func (p ReplyPattern) String() string {
	switch p {
	case ReplyResponse:
		return "Response"
	case ReplyCallback:
		return "Callback"
	case ReplyPoll:
		return "Poll"
	}
	return ""
}

// ParseReplyPattern maps a wire value (case-sensitive, R17) to its pattern.
func ParseReplyPattern(s string) (ReplyPattern, bool) {
	switch s {
	case "Response":
		return ReplyResponse, true
	case "Callback":
		return ReplyCallback, true
	case "Poll":
		return ReplyPoll, true
	}
	return 0, false
}
