package zones

// ReservedPrefix begins every name vaultgate makes in a vault for itself:
// a replaced note's new body before its rename and a restore's file or
// folder (.vaultgate-tmp-…), a bash commit's staged files
// (.vaultgate-txn-…), the case probe (.vaultgate-case-probe-…). A name
// that begins with it, in any spelling case folding makes the same, is
// reserved at any depth: the zone table caps it at protected (Zone), so
// no agent creates, fills, moves or removes one by any route the zones
// judge — the file tools, the hook, a bash command's predicted effects
// and what a walled one really changed. vaultgate's own code makes these
// names outside any judgement, and a server's start-up removes only those
// its journal notes (history.Temps), never by this prefix: a reserved
// name someone else made stays, and is only protected.
const ReservedPrefix = ".vaultgate-"

// IsReserved reports whether the file or folder name (one component)
// is reserved.
func IsReserved(name string) bool { return reservedName(Fold(name)) }

func reservedName[K ~string | ~[]byte](c K) bool {
	return len(c) >= len(ReservedPrefix) && string(c[:len(ReservedPrefix)]) == ReservedPrefix
}

// reservedCap protects every path with a reserved name among its
// components. f is folded.
func reservedCap[K ~string | ~[]byte](f K) Mode {
	for len(f) > 0 {
		i := 0
		for i < len(f) && f[i] != '/' {
			i++
		}
		if reservedName(f[:i]) {
			return Protected
		}
		if i == len(f) {
			break
		}
		f = f[i+1:]
	}
	return Write
}

// ReservedIn reports whether a reserved name is among p's components.
func ReservedIn(p Path) bool { return reservedCap(fold(p.p)) == Protected }
