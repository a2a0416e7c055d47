// Package rules compiles the config's [[rules.deny]] rules, CEL
// expressions over a call, each of its effects and the session, into
// policy.Rule values that run after the built-in chain.
//
// It must fail closed everywhere: an expression that does not compile,
// names a variable that does not exist, is not a bool, or gets one of its
// examples wrong is an error at start-up, with the rule, line and column;
// at run time an expression that errs or runs past its cost limit denies,
// naming the rule. It never judges a call by anything but what the rule
// says, and it does no I/O.
//
// The CEL environment is built on the first Compile, so a process whose
// agent has no rules never pays for it.
package rules
