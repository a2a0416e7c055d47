// Package config loads and validates vaultgate's TOML policy file and turns
// it into one resolved Policy per agent. Every bad input is an error that
// names the key; nothing is guessed, and an unknown key is an error, because
// a misspelt protection is worse than none.
package config
