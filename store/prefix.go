package store

import (
	"github.com/wsrkit/wsrkit/rmp/group"
)

// Level says how many fields of a Prefix select records.
type Level uint8

const (
	// LevelRole selects every record of a role.
	LevelRole Level = iota + 1
	// LevelGroup selects every generation of one groupId.
	LevelGroup
	// LevelGeneration selects one group generation.
	LevelGeneration
	// LevelKind selects the records of one kind of a group generation.
	LevelKind
)

// Prefix selects the records whose key starts with its first Level fields;
// fields below that level are ignored. Build one with RolePrefix,
// GroupPrefix, GenerationPrefix or KindPrefix.
type Prefix struct {
	Level      Level
	Role       group.Role
	GroupID    string
	Generation uint64
	Kind       group.Kind
}

// RolePrefix selects every record of role.
func RolePrefix(role group.Role) Prefix { return Prefix{Level: LevelRole, Role: role} }

// GroupPrefix selects every generation of groupID. Records of a groupId
// that merely starts with groupID are not selected.
func GroupPrefix(role group.Role, groupID string) Prefix {
	return Prefix{Level: LevelGroup, Role: role, GroupID: groupID}
}

// GenerationPrefix selects the records of one group generation.
func GenerationPrefix(role group.Role, id group.ID) Prefix {
	return Prefix{Level: LevelGeneration, Role: role, GroupID: id.GroupID, Generation: id.Generation}
}

// KindPrefix selects the records of one kind of a group generation.
func KindPrefix(role group.Role, id group.ID, kind group.Kind) Prefix {
	return Prefix{Level: LevelKind, Role: role, GroupID: id.GroupID, Generation: id.Generation, Kind: kind}
}
