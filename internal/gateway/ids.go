package gateway

import (
	"encoding/base64"
	"errors"
	"strconv"
	"strings"

	"github.com/wsrkit/wsrkit/rmp/sender"
)

// Message ids are opaque to clients; inside they are the base64url encoding
// of "<number>~<groupId>" for a sequenced message and "s~<groupId>" for a
// singleton (R06), so GET /v1/messages/{id} maps back to the sending RMP's
// MessageRef without a lookup table.

// MessageID returns the opaque id of ref.
func MessageID(ref sender.MessageRef) string {
	var raw string
	if ref.Singleton {
		raw = "s~" + ref.GroupID
	} else {
		raw = strconv.FormatUint(ref.Number, 10) + "~" + ref.GroupID
	}
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

var errBadID = errors.New("malformed message id")

// ParseMessageID reverses MessageID.
func ParseMessageID(id string) (sender.MessageRef, error) {
	b, err := base64.RawURLEncoding.DecodeString(id)
	if err != nil {
		return sender.MessageRef{}, errBadID
	}
	head, gid, ok := strings.Cut(string(b), "~")
	if !ok || gid == "" {
		return sender.MessageRef{}, errBadID
	}
	if head == "s" {
		return sender.MessageRef{GroupID: gid, Singleton: true}, nil
	}
	n, err := strconv.ParseUint(head, 10, 64)
	if err != nil || strconv.FormatUint(n, 10) != head {
		return sender.MessageRef{}, errBadID
	}
	return sender.MessageRef{GroupID: gid, Number: n}, nil
}

// numberJSON is a message number for JSON: null for singletons.
func numberJSON(hasNumber bool, n uint64) *uint64 {
	if !hasNumber {
		return nil
	}
	return &n
}
