// Package interop runs wsrkit between real SOAP software that knows nothing
// of WS-Reliability: Debian's python3-zeep as the client, python3-spyne as
// the service (testdata/). The tests skip with one line when those are
// absent, and fail when CI is set (internal/testtool).
package interop
