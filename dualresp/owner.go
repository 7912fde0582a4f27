package dualresp

import "strings"

// OwnerIdentity returns the identity that owner belongs to. An owner
// written "identity/label" is a label inside identity: a server that
// identifies callers by something they cannot choose (a bearer token, a
// network address) and lets them name themselves further (a client key
// inside an address) stores records under identity/label. Access control
// compares whole owners; the bounds on what one owner may hold (the
// MemoryStore's records per owner, Options.MaxPinnedPerOwner, the order of
// eviction) apply per identity, so labels subdivide an identity's share
// and never multiply it: a caller minting new labels gets no more room.
// An owner without "/" is its own identity.
func OwnerIdentity(owner string) string {
	identity, _, _ := strings.Cut(owner, "/")
	return identity
}
