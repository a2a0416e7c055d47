package search

import "encoding/binary"

func lowerByte(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + ('a' - 'A')
	}
	return c
}

// lowerASCII writes src to dst with A–Z made a–z and every other byte as
// it is, so a position in dst is the same position in src. dst is at
// least as long as src.
func lowerASCII(dst, src []byte) {
	const (
		high = 0x8080808080808080
		geA  = 0x3f3f3f3f3f3f3f3f // + 0x3f sets a byte's top bit from 'A' (0x41) up
		gtZ  = 0x2525252525252525 // + 0x25 sets it from '[' (0x5b) up
	)
	i := 0
	for ; i+8 <= len(src); i += 8 {
		x := binary.LittleEndian.Uint64(src[i:])
		low7 := x &^ high
		upper := (low7 + geA) &^ (low7 + gtZ) &^ x & high // 'A'..'Z', and ASCII
		binary.LittleEndian.PutUint64(dst[i:], x|upper>>2)
	}
	for ; i < len(src); i++ {
		dst[i] = lowerByte(src[i])
	}
}
