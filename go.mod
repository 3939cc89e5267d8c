module github.com/wsrkit/wsrkit

go 1.26
