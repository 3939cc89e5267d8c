// Package rmp is wsrkit's embedding API: the Engine that joins the sending
// and receiving RMPs, the SOAP wire layer and a store, the Node that drives
// it with a clock, a transport and callbacks, and the HTTP binding.
package rmp
