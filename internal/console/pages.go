package console

import (
	"net/http"
	"net/url"
)

type overviewData struct {
	Stats  statsJSON
	Stuck  groupsJSON
	Failed messagesJSON
	Peers  []peerJSON
	Down   int // peers whose last exchange failed
}

// overview: the hour's throughput, the gauges, and the first stuck groups
// and failed messages, each a click from its page.
func (c *Console) overview(q *request) (string, *view, error) {
	var d overviewData
	if err := q.call("GET", "/v1/stats", nil, &d.Stats); err != nil {
		return "", nil, err
	}
	if err := q.call("GET", "/v1/groups", url.Values{"gap": {"true"}, "state": {"open"}, "sort": {"held"}, "limit": {"10"}}, &d.Stuck); err != nil {
		return "", nil, err
	}
	if err := q.call("GET", "/v1/messages", url.Values{"state": {"failed"}, "limit": {"10"}}, &d.Failed); err != nil {
		return "", nil, err
	}
	var peers struct{ Peers []peerJSON }
	if err := q.call("GET", "/v1/peers", nil, &peers); err != nil {
		return "", nil, err
	}
	d.Peers = peers.Peers
	for _, p := range d.Peers {
		if p.Reachable != nil && !*p.Reachable {
			d.Down++
		}
	}
	return "overview", &view{Title: "Overview", Nav: "overview", Data: d}, nil
}

// groupFilter is the groups page's form, echoed back into it.
type groupFilter struct {
	Role, State, Q, Sort string
	Gap                  bool
}

type groupsData struct {
	Filter  groupFilter
	Page    groupsJSON
	NextURL string
	Aborted string // a group just aborted from this console
	Role    string
}

const groupsPerPage = 50

func (c *Console) groups(q *request) (string, *view, error) {
	in := q.r.URL.Query()
	f := groupFilter{Role: in.Get("role"), State: in.Get("state"), Q: in.Get("q"), Sort: in.Get("sort"), Gap: in.Get("gap") == "true"}
	api := url.Values{"limit": {"50"}}
	for k, v := range map[string]string{"role": f.Role, "state": f.State, "q": f.Q, "sort": f.Sort, "after": in.Get("after")} {
		if v != "" {
			api.Set(k, v)
		}
	}
	if f.Gap {
		api.Set("gap", "true")
	}
	d := groupsData{Filter: f, Aborted: in.Get("aborted"), Role: in.Get("abortedRole")}
	if err := q.call("GET", "/v1/groups", api, &d.Page); err != nil {
		return "", nil, err
	}
	if d.Page.Next != nil {
		next := url.Values{}
		for k, v := range in {
			if k != "after" && k != "aborted" && k != "abortedRole" {
				next[k] = v
			}
		}
		next.Set("after", *d.Page.Next)
		d.NextURL = "/console/groups?" + next.Encode()
	}
	return "groups", &view{Title: "Groups", Nav: "groups", Data: d}, nil
}

type groupData struct {
	G      groupJSON
	Failed messagesJSON
	Role   string
}

// fetchGroup reads the group of the path, on the side ?role= names.
func (q *request) fetchGroup() (groupJSON, string, error) {
	id, role := q.r.PathValue("groupId"), q.r.FormValue("role")
	var g groupJSON
	api := url.Values{}
	if role == "sender" || role == "receiver" {
		api.Set("role", role)
	}
	err := q.call("GET", "/v1/groups/"+url.PathEscape(id), api, &g)
	return g, id, err
}

func (c *Console) group(q *request) (string, *view, error) {
	g, _, err := q.fetchGroup()
	if err != nil {
		return "", nil, err
	}
	d := groupData{G: g, Role: g.Role}
	if g.Role == "sender" {
		if err := q.call("GET", "/v1/messages", url.Values{"group": {g.GroupID}, "limit": {"20"}}, &d.Failed); err != nil {
			return "", nil, err
		}
	}
	return "group", &view{Title: "Group " + g.GroupID, Nav: "groups", Data: d}, nil
}

// confirmAbort is the confirmation step of an abort: what it will do, and
// the form that does it.
func (c *Console) confirmAbort(q *request) (string, *view, error) {
	g, _, err := q.fetchGroup()
	if err != nil {
		return "", nil, err
	}
	return "confirm", &view{Title: "Abort group " + g.GroupID, Nav: "groups", Refresh: -1, Data: g}, nil
}

// abort terminates the group on one side (DELETE /v1/groups/{id}?role=)
// and returns to the groups page, which says so.
func (c *Console) abort(q *request) (string, *view, error) {
	q.r.Body = http.MaxBytesReader(q.w, q.r.Body, 8<<10)
	id, role := q.r.PathValue("groupId"), q.r.PostFormValue("role")
	if role != "sender" && role != "receiver" {
		return "", nil, &apiError{status: http.StatusBadRequest, msg: "role must be sender or receiver"}
	}
	if err := q.call("DELETE", "/v1/groups/"+url.PathEscape(id), url.Values{"role": {role}}, nil); err != nil {
		return "", nil, err
	}
	http.Redirect(q.w, q.r, "/console/groups?"+url.Values{"aborted": {id}, "abortedRole": {role}}.Encode(), http.StatusSeeOther)
	return "", nil, nil
}

type messagesData struct {
	State, Q string
	Page     messagesJSON
	NextURL  string
}

func (c *Console) messages(q *request) (string, *view, error) {
	in := q.r.URL.Query()
	d := messagesData{State: in.Get("state"), Q: in.Get("q")}
	if !in.Has("state") {
		d.State = "failed"
	}
	api := url.Values{"limit": {"50"}}
	if d.State == "failed" || d.State == "acknowledged" {
		api.Set("state", d.State)
	}
	if d.Q != "" {
		api.Set("q", d.Q)
	}
	if a := in.Get("after"); a != "" {
		api.Set("after", a)
	}
	if err := q.call("GET", "/v1/messages", api, &d.Page); err != nil {
		return "", nil, err
	}
	if d.Page.Next != nil {
		next := url.Values{"state": {d.State}, "q": {d.Q}, "after": {*d.Page.Next}}
		d.NextURL = "/console/messages?" + next.Encode()
	}
	return "messages", &view{Title: "Messages", Nav: "messages", Data: d}, nil
}

func (c *Console) message(q *request) (string, *view, error) {
	var m messageJSON
	if err := q.call("GET", "/v1/messages/"+url.PathEscape(q.r.PathValue("id")), nil, &m); err != nil {
		return "", nil, err
	}
	return "message", &view{Title: "Message " + m.ID, Nav: "messages", Data: m}, nil
}

func (c *Console) peers(q *request) (string, *view, error) {
	var peers struct{ Peers []peerJSON }
	if err := q.call("GET", "/v1/peers", nil, &peers); err != nil {
		return "", nil, err
	}
	return "peers", &view{Title: "Peers", Nav: "peers", Data: peers.Peers}, nil
}
