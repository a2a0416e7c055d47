package search

func lowerByte(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + ('a' - 'A')
	}
	return c
}

// lower8 is eight bytes with A–Z made a–z and every other byte as it is.
func lower8(x uint64) uint64 {
	const (
		high = 0x8080808080808080
		geA  = 0x3f3f3f3f3f3f3f3f // + 0x3f sets a byte's top bit from 'A' (0x41) up
		gtZ  = 0x2525252525252525 // + 0x25 sets it from '[' (0x5b) up
	)
	low7 := x &^ high
	upper := (low7 + geA) &^ (low7 + gtZ) &^ x & high // 'A'..'Z', and ASCII
	return x | upper>>2
}
