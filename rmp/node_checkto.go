package rmp

import "sync"

// maxCheckedTo bounds the destinations a Node remembers as passed.
const maxCheckedTo = 1024

// checkedTo remembers the submission destinations that passed the
// node's outbound policy (NodeConfig.Outbound, fixed at Open): producers
// submit to a few URLs many times, and the check parses the URL each
// time (#22). Only passes are kept; a refused URL is checked again.
type checkedTo struct {
	mu sync.Mutex
	ok map[string]struct{}
}

// checkTo is NodeConfig.Outbound.CheckURL(to), remembered when it passes.
func (n *Node) checkTo(to string) error {
	c := &n.checked
	c.mu.Lock()
	_, ok := c.ok[to]
	c.mu.Unlock()
	if ok {
		return nil
	}
	if err := n.cfg.Outbound.CheckURL(to); err != nil {
		return err
	}
	c.mu.Lock()
	if c.ok == nil || len(c.ok) >= maxCheckedTo {
		c.ok = make(map[string]struct{}) // bounded: destinations come from producers
	}
	c.ok[to] = struct{}{}
	c.mu.Unlock()
	return nil
}
