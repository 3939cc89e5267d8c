package rmp

import (
	"reflect"
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
	"github.com/wsrkit/wsrkit/rmp/sender"
)

// Submission is flat for embedders; every field of the sending RMP's
// Submission must be in it, and reach the sender.
func TestSubmissionCarriesEverySenderField(t *testing.T) {
	st := reflect.TypeFor[sender.Submission]()
	rt := reflect.TypeFor[Submission]()
	for i := range st.NumField() {
		f := st.Field(i)
		g, ok := rt.FieldByName(f.Name)
		if !ok || g.Type != f.Type {
			t.Errorf("rmp.Submission lacks %s %s of sender.Submission", f.Name, f.Type)
		}
	}
	s := Submission{
		To: "http://to", GroupKey: "k", Last: true, Flags: group.Flags{AckRequested: true},
		Expiry: time.Unix(1, 0), Lifetime: time.Second, Timing: group.Timing{HasMaxIdle: true, MaxIdle: group.Duration{Years: 1}},
		Pattern: group.ReplyCallback, ReplyTo: "http://cb", Action: "urn:a", Payload: []byte("<x/>"),
	}
	got := reflect.ValueOf(s.sending())
	for i := range st.NumField() {
		if got.Field(i).IsZero() {
			t.Errorf("sending() drops %s", st.Field(i).Name)
		}
	}
}
