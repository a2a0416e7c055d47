package sandbox

// ChangesStart reports whether a variable named name must never be given
// to a program by anyone's choice: a name that is not a plain identifier,
// or one that changes what bash, the loader or the C library runs (LD_*,
// BASH_ENV, …). A credential's name (an API key) may be given on purpose;
// these may not.
func ChangesStart(name string) bool {
	return !validName(name) || execBlocked(name)
}
