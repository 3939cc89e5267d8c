// Package conformance is wsrkit's scenario runner: it drives real rmp.Engine
// instances over a scripted network in virtual time, from text files in the
// cockroachdb/datadriven format, and compares the effects they print with the
// expected output written in the file.
//
// Every scenario runs in three modes that must print the same thing: over
// store/memstore, over pebble on an in-memory filesystem, and over pebble with
// a crash and restart after every command (R89–R93). A file may hold
// several scenarios of one topic, separated by the command reset. The README
// section "Conformance scenarios" describes the commands (commands.go
// dispatches them); Main is the command-line entry point behind
// `wsrkit conform`.
package conformance
