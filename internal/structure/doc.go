// Package structure holds no code: its tests read the repository's Go
// source and fail when a question the design answers in one place grows a
// second answer (docs/architecture.md, "Invariants"). Each invariant is a
// row of the table in structure_test.go.
package structure
