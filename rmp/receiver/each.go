package receiver

// EachGroup calls fn with every listed group generation that keep (nil:
// every one) accepts by its id and generation, in no particular order,
// without copying: the GroupInfo and its Ranges are valid only during the
// call and must not be modified. It is what a listing of 100,000 groups a
// page at a time scans (gateway GET /v1/groups, #21); keep spares it the
// rest of the groups it will not show.
func (r *Receiver) EachGroup(keep func(groupID string, generation uint64) bool, fn func(*GroupInfo)) {
	var gi GroupInfo
	for _, f := range r.groups {
		for _, g := range f.gens {
			if listed(g) && (keep == nil || keep(g.id.GroupID, g.id.Generation)) {
				gi = infoInto(g, gi.Ranges[:0])
				fn(&gi)
			}
		}
	}
}
