package shell

import (
	"strings"
	"sync"
)

// read is a command that reads each operand.
func read(flags, valued, long string) *spec {
	return &spec{opts: options(flags, valued, long), args: []role{reads}}
}

// inert runs nothing and touches no file.
var inert = &spec{raw: true}

// stateBuiltin is a shell builtin that changes what the analysis knows.
func stateBuiltin(fn func(a *analyzer, st *state, c *cmdCall)) *spec { return &spec{builtin: fn} }

// table is every command the analysis knows, by name. An entry reads:
//
//   - opts: the options the command knows: short flags, short options that
//     take a value, long names ("name=" takes a value, "name?" may). Any
//     other option makes the command exec.
//   - does: what options do, by name: make the operands subtrees, name a
//     file read or written, name the target folder, run a program…
//   - args: what the command does to each operand, in order, the last role
//     repeating (PATTERN FILE... is notPath, reads).
//   - transfer: for SOURCE... DEST commands, what happens to each pair.
//   - hook: only for syntax that is not options and operands.
//
// It is built on first use, not at package init: a hook call that judges
// no bash (Write, Read, …) then never pays for compiling it.
var tableOnce sync.Once
var tableMap map[string]*compiled

func table() map[string]*compiled {
	tableOnce.Do(buildTable)
	return tableMap
}

func buildTable() {
	t := map[string]*compiled{}
	add := func(s *spec, names ...string) {
		c := s.compile()
		for _, n := range names {
			t[n] = c
		}
	}
	add(read("AbeEnstTuv", "", "show-all number-nonblank show-ends number squeeze-blank show-tabs show-nonprinting"), "cat")
	add(read("s", "", ""), "tac", "rev")
	h := read("qvz", "cn", "bytes= lines= quiet silent verbose zero-terminated")
	h.opts.numeric = true
	add(h, "head")
	tl := read("fFqvzr", "cnsp", "bytes= lines= quiet silent verbose zero-terminated follow? retry sleep-interval= pid= max-unchanged-stats=")
	tl.opts.numeric = true
	add(tl, "tail")
	wc := read("clmwL", "", "bytes chars lines words max-line-length total= files0-from=")
	wc.does = does{"files0-from": readsList}
	add(wc, "wc")
	grep := read("EFGPiyvwxcLlmoqsbHhnTZzUraRIV", "efABCmdD",
		"extended-regexp fixed-strings basic-regexp perl-regexp regexp= file= ignore-case no-ignore-case word-regexp line-regexp "+
			"null-data no-messages invert-match version help max-count= byte-offset line-number line-buffered with-filename no-filename "+
			"label= only-matching quiet silent binary-files= text directories= devices= recursive dereference-recursive include= exclude= "+
			"exclude-from= exclude-dir= files-without-match files-with-matches count initial-tab null color? colour? after-context= "+
			"before-context= context= binary")
	grep.does = does{
		"r recursive":             subtree,
		"R dereference-recursive": subtree | derefTree,
		"e regexp":                givesFirst,
		"f file":                  givesFirst | readsValue,
		"exclude-from":            readsList,
	}
	grep.args = []role{notPath, reads} // PATTERN FILE...
	grep.hereIfTree = true
	add(grep, "grep", "egrep", "fgrep")
	rg := read("iSswxvnNlcHIuLFUPaoqz0.e", "efgtTmABCrMj",
		"ignore-case smart-case case-sensitive word-regexp line-regexp invert-match line-number no-line-number files-with-matches "+
			"count with-filename no-filename no-ignore hidden follow fixed-strings multiline pcre2 text only-matching quiet regexp= "+
			"file= glob= iglob= type= type-not= max-count= after-context= before-context= context= replace= max-columns= "+
			"max-depth= maxdepth= color= colors= no-heading heading json files type-list sort= sortr= trim vimgrep column "+
			"null stats no-messages unrestricted threads= max-filesize= binary no-ignore-vcs no-config pre= pre-glob= search-zip "+
			"ignore-file= count-matches passthru byte-offset engine= encoding= crlf")
	rg.does = does{
		"L follow":         derefTree,
		"e regexp":         givesFirst,
		"f file":           givesFirst | readsValue,
		"files type-list":  givesFirst,
		"ignore-file":      readsValue,
		"pre z search-zip": runsProgram,
	}
	rg.args = []role{notPath, reads} // PATTERN PATH...
	rg.whole, rg.here = true, true
	add(rg, "rg")
	ls := read("aAbBcCdfFgGhHiklLmnNopqQrRsStuUvwxXZ1", "ITw",
		"all almost-all escape ignore-backups color? directory classify file-type format= full-time group-directories-first "+
			"no-group human-readable si dereference-command-line dereference hide= hyperlink? indicator-style= inode ignore= kibibytes "+
			"literal numeric-uid-gid hide-control-chars show-control-chars quote-name quoting-style= reverse recursive size sort= "+
			"time= time-style= tabsize= width= context zero block-size= author")
	ls.does = does{"R recursive": subtree, "L dereference": derefTree}
	ls.here = true
	add(ls, "ls", "dir", "vdir")
	sorts := read("bdfgiMhnRrVcCmsuz", "koSt",
		"ignore-leading-blanks dictionary-order ignore-case general-numeric-sort ignore-nonprinting month-sort human-numeric-sort "+
			"numeric-sort random-sort reverse version-sort check? merge stable unique zero-terminated key= output= field-separator= "+
			"buffer-size= parallel= sort= debug random-source= files0-from= compress-program=")
	sorts.opts.dynamic = true
	sorts.does = does{"o output": writesValue, "random-source": readsValue, "files0-from": readsList, "compress-program": runsProgram}
	add(sorts, "sort")
	uniq := read("cdDiuz", "fsw", "count repeated all-repeated? ignore-case unique zero-terminated skip-fields= skip-chars= check-chars= group?")
	uniq.output = 2 // INPUT OUTPUT
	uniq.opts.dynamic = true
	add(uniq, "uniq")
	add(read("nsz", "bcdf", "bytes= characters= delimiter= fields= complement only-delimited output-delimiter= zero-terminated"), "cut")
	tr := read("cCdst", "", "complement delete squeeze-repeats truncate-set1")
	tr.args = []role{notPath}
	add(tr, "tr")
	diff := read("qsuNaiwbBEtTpycrZ", "UCFIlxXS", "brief report-identical-files unified= context= new-file text ignore-case "+
		"ignore-all-space ignore-space-change ignore-blank-lines recursive color? side-by-side width= normal suppress-common-lines exclude-from= "+
		"show-function-line= label= exclude= ignore-matching-lines= strip-trailing-cr no-dereference expand-tabs initial-tab "+
		"minimal speed-large-files horizon-lines= tabsize= suppress-blank-empty")
	diff.does = does{"r recursive": subtree | derefTree, "X exclude-from": readsList} // diff -r follows links inside the trees
	add(diff, "diff")
	add(read("blsz", "in", "print-bytes verbose quiet silent bytes= ignore-initial= zero"), "cmp")
	add(read("bhiLNkz0", "F", "brief mime mime-type mime-encoding dereference no-dereference keep-going print0 separator= uncompress"), "file")
	add(read("LftZ", "c", "dereference file-system terse format= printf= cached="), "stat")
	du := read("0abcDhHklLmsSxPt", "dBX", "all apparent-size bytes total dereference-args human-readable si dereference "+
		"count-links separate-dirs summarize one-file-system max-depth= block-size= exclude= threshold= time? time-style= inodes null no-dereference "+
		"exclude-from= files0-from=")
	du.does = does{"L dereference": derefTree, "X exclude-from files0-from": readsList}
	du.whole, du.here = true, true
	add(du, "du")
	add(read("ahHiklPTvx", "tBx", "all human-readable si inodes local portability print-type output? total type= exclude-type= block-size= sync no-sync"), "df")
	add(read("LPemqsvz", "", "canonicalize-existing canonicalize-missing logical physical quiet strip no-symlinks zero relative-to= relative-base="), "realpath")
	add(read("fmnqsevz", "", "canonicalize canonicalize-existing canonicalize-missing no-newline quiet silent verbose zero"), "readlink")
	np := read("asz", "", "multiple suffix= zero")
	np.args = []role{notPath}
	add(np, "basename")
	np2 := read("z", "", "zero")
	np2.args = []role{notPath}
	add(np2, "dirname")
	for _, n := range []string{"md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum", "sum"} {
		sum := read("bctwzr", "a", "binary check tag text warn strict quiet status ignore-missing zero algorithm= length= base64 raw untagged")
		sum.does = does{"c check": checksLists}
		add(sum, n)
	}
	add(read("123iz", "", "check-order nocheck-order output-delimiter= total zero-terminated"), "comm")
	add(read("sz", "d", "serial delimiters= zero-terminated"), "paste")
	add(read("iz", "aejotv12", "ignore-case check-order nocheck-order header zero-terminated"), "join")
	add(read("bs", "w", "bytes spaces width="), "fold")
	add(read("cstu", "wpg", "crown-margin prefix= split-only tagged-paragraph uniform-spacing width= goal="), "fmt")
	add(read("tnJex", "cso", "table separator= output-separator= table-columns= table-right= json fillrows output-width= keep-empty-lines"), "column")
	nl := read("p", "bdfhilnsvw", "body-numbering= section-delimiter= footer-numbering= header-numbering= line-increment= join-blank-lines= number-format= no-renumber number-separator= starting-line-number= number-width=")
	add(nl, "nl")
	xxd := read("aCEeiprsu", "bcglos", "autoskip bits capitalize cols= EBCDIC groupsize= include len= name= offset= postscript plain revert seek= uppercase")
	xxd.output = 2 // INPUT OUTPUT
	add(xxd, "xxd")
	add(read("bcdfilosvx", "ANjStw", "address-radix= endian= skip-bytes= read-bytes= format= output-duplicates strings= traditional width?"), "od")
	add(read("bcCdovx", "enfsL", "length= skip= format="), "hexdump")
	add(read("afw", "nteT", "all bytes= radix= encoding= print-file-name target= data"), "strings")
	shuf := read("erz", "inoS", "echo input-range= head-count= output= random-source= repeat zero-terminated")
	shuf.does = does{"o output": writesValue, "random-source": readsValue}
	shuf.opts.dynamic = true
	add(shuf, "shuf")
	add(read("i", "t", "initial tabs="), "expand")
	add(read("a", "t", "all first-only tabs="), "unexpand")
	add(inert, "true", "false", ":", "pwd", "sleep", "seq", "yes", "whoami", "id", "uname", "which",
		"type", "nproc", "arch", "groups", "logname", "tty", "printenv", "locale", "getconf", "users",
		"help", "times", "umask", "jobs", "dirs", "caller", "exit", "return", "break", "continue", "shift", "uptime",
		"cal", "expr", "factor", "numfmt", "tput", "clear", "echo") // expr: string and integer operations only
	add(&spec{
		opts: options("uRI", "dfrs", "date= file= iso-8601? rfc-email rfc-3339= reference= utc universal debug set="),
		does: does{"f file r reference": readsValue, "s set": setsMachine},
		args: []role{notPath}, // +FORMAT, or the date to set
		hook: machineOperands(func(s string) bool { return strings.HasPrefix(s, "+") }),
	}, "date")
	add(&spec{
		opts: options("aAbdfiIsyv", "F", "alias all-fqdns all-ip-addresses boot domain fqdn long ip-address nis yp short verbose file="),
		does: does{"F file": setsMachine},
		args: []role{notPath}, // NAME: the host name to set
		hook: machineOperands(func(string) bool { return false }),
	}, "hostname")
	add(&spec{
		opts: options("rjcnseaSCMRh0", "fL", "raw-output join-output compact-output null-input slurp exit-status "+
			"ascii-output sort-keys color-output monochrome-output raw-input tab indent= arg= argjson= slurpfile= "+
			"rawfile= args jsonargs seq stream stream-errors from-file= raw-output0 unbuffered"),
		does:    does{"f from-file": readsValue | givesFirst, "L": readsTree},
		args:    []role{notPath, reads}, // FILTER FILE...
		rewrite: jqArgs,
	}, "jq")

	// Builtins that change what the analysis knows, and nested scripts.
	add(stateBuiltin(runTest), "test", "[")
	add(stateBuiltin(runCd), "cd", "pushd")
	add(stateBuiltin(func(a *analyzer, st *state, c *cmdCall) { st.cwdKnown, st.pwd = false, "" }), "popd")
	add(stateBuiltin(runSet), "set")
	add(stateBuiltin(runRead), "read")
	add(stateBuiltin(runWait), "wait")
	add(stateBuiltin(runUnset), "unset")
	add(stateBuiltin(runPrintf), "printf")
	add(stateBuiltin(runMapfile), "mapfile", "readarray")
	add(stateBuiltin(func(a *analyzer, st *state, c *cmdCall) {
		if len(c.args) >= 2 {
			a.setNames(st, c, c.args[1:2])
		}
	}), "getopts")
	add(stateBuiltin(runEval), "eval")
	shell := options("csleuxvfnrphBCEHPT", "o", "noprofile norc posix login noediting restricted verbose")
	shell.noPerm, shell.plus = true, true
	add(&spec{opts: shell, hook: shellScript}, "bash", "sh", "dash", "rbash") // [-c SCRIPT | -s | FILE] [ARG]...

	// Wrappers: options of their own, then the command they run.
	wrapper := func(o optSpec, args ...role) *spec {
		o.noPerm = true
		if len(args) == 0 {
			args = []role{runs}
		}
		return &spec{opts: o, args: args}
	}
	nice := wrapper(options("", "n", "adjustment="))
	nice.opts.numeric = true
	add(nice, "nice")
	add(wrapper(optSpec{}), "nohup")
	add(wrapper(options("", "ioe", "input= output= error=")), "stdbuf")
	add(wrapper(options("cfw", "", "ctty fork wait")), "setsid")
	add(wrapper(options("t", "cnp", "class= classdata= pid= ignore")), "ionice")
	add(wrapper(options("fpv", "sk", "foreground preserve-status verbose signal= kill-after="), literal, runs), "timeout") // DURATION COMMAND
	cmd := wrapper(options("pvV", "", ""))
	cmd.does = does{"v V": lookupOnly}
	add(cmd, "command")
	add(wrapper(options("cl", "a", "")), "exec")
	tm := wrapper(options("pavq", "fo", "portability append verbose quiet format= output="))
	tm.does = does{"o output": writesValue}
	add(tm, "time")
	env := wrapper(options("i0v", "uC", "ignore-environment null unset= chdir= debug"))
	env.hook = envHook // [NAME=VALUE]... COMMAND
	add(env, "env")
	xargs := wrapper(options("0prtxeil", "adEILnPs", "null arg-file= delimiter= eof? replace? max-lines? max-args= "+
		"max-procs= interactive no-run-if-empty max-chars= verbose exit open-tty process-slot-var= show-limits"))
	xargs.does = does{"a arg-file": readsValue}
	xargs.hook = xargsHook // COMMAND [ARG]..., then what it reads
	add(xargs, "xargs")
	add(&spec{raw: true, hook: builtinHook}, "builtin")

	// Commands that write.
	add(&spec{
		opts: options("fiIrRdv", "", "force interactive? recursive dir verbose one-file-system no-preserve-root preserve-root?"),
		does: does{"r R recursive": subtree},
		args: []role{deletes},
	}, "rm")
	add(&spec{
		opts: options("pv", "", "ignore-fail-on-non-empty parents verbose"),
		does: does{"p parents": parents},
		args: []role{removesDir},
	}, "rmdir")
	add(&spec{args: []role{deletes}}, "unlink")
	add(&spec{
		opts: options("bfinTuvZ", "St", "backup? force interactive no-clobber no-target-directory target-directory= update? "+
			"verbose strip-trailing-slashes suffix= context no-copy").guarded(),
		does: does{
			"t target-directory":    intoValue,
			"T no-target-directory": onto,
			"b backup S suffix":     backup,
		},
		transfer: moves,
	}, "mv")
	add(&spec{
		opts: options("abdfHilLnPpRrsTuvx", "St", "archive attributes-only backup? copy-contents debug force interactive "+
			"link dereference no-clobber no-dereference preserve? no-preserve= parents recursive reflink? remove-destination "+
			"sparse= strip-trailing-slashes suffix= target-directory= no-target-directory update? verbose one-file-system "+
			"keep-directory-symlink").guarded(),
		does: does{
			"r R recursive":         subtree,
			"a archive":             subtree | noFollow,
			"L dereference":         derefTree,
			"P d no-dereference":    noFollow,
			"l link":                hardLink,
			"t target-directory":    intoValue,
			"T no-target-directory": onto,
			"s parents":             unmodelled,
		},
		transfer: copies,
	}, "cp")
	add(&spec{
		opts: options("bcCdDpsTvZ", "gmoStZ", "backup? compare directory group= mode= owner= preserve-timestamps strip "+
			"strip-program= suffix= target-directory= no-target-directory verbose preserve-context context?").guarded(),
		does: does{
			"s strip strip-program": runsProgram,
			"d directory":           makesDirs,
			"t target-directory":    intoValue,
			"T no-target-directory": onto,
		},
		transfer: installs,
	}, "install")
	add(&spec{
		opts: options("bdfFinsLPrTv", "St", "backup? directory force interactive logical no-dereference physical relative "+
			"symbolic suffix= target-directory= no-target-directory verbose").guarded(),
		does: does{
			"s symbolic":                             symbolic,
			"f force":                                replaces,
			"L logical":                              follow,
			"r relative":                             relative,
			"t target-directory":                     intoValue,
			"T no-target-directory n no-dereference": onto, // -n: a link to a folder is a name to replace
		},
		transfer: links, // TARGET... NAME, or TARGET alone: a link in the working directory
	}, "ln")
	add(&spec{
		opts: options("acfhm", "drt", "no-create date= no-dereference reference= time= timestamp="),
		does: does{"r reference": readsValue, "h no-dereference": noFollow},
		args: []role{creates},
	}, "touch")
	add(&spec{
		opts: options("pvZ", "m", "parents verbose mode= context?"),
		does: does{"p parents": parents},
		args: []role{makesDir},
	}, "mkdir")
	add(&spec{opts: options("aip", "", "append ignore-interrupts output-error?"), args: []role{creates}}, "tee")
	add(&spec{
		opts: options("co", "rs", "no-create io-blocks reference= size="),
		does: does{"r reference": readsValue},
		args: []role{creates},
	}, "truncate")
	add(&spec{
		opts:    options("cfvR", "", "changes silent quiet verbose recursive reference= preserve-root no-preserve-root"),
		does:    does{"R recursive": subtree, "reference": readsValue | givesFirst},
		args:    []role{notPath, modifies}, // MODE FILE...
		rewrite: chmodMode,
	}, "chmod")
	add(&spec{
		opts: options("cfvRhHLP", "", "changes silent quiet verbose recursive reference= from= dereference no-dereference "+
			"preserve-root no-preserve-root"),
		does: does{
			"R recursive":      subtree,
			"L dereference":    derefTree,
			"h no-dereference": noFollow,
			"reference":        readsValue | givesFirst,
		},
		args: []role{notPath, modifies}, // OWNER FILE...
	}, "chown", "chgrp")
	add(&spec{
		opts: options("nErsuz", "efl", "quiet silent expression= file= regexp-extended separate unbuffered null-data "+
			"line-length= posix debug sandbox follow-symlinks in-place?").glue("i"),
		does: does{"e expression": givesFirst, "follow-symlinks": follow, "i in-place": inPlace},
		args: []role{notPath, edits}, // SCRIPT FILE...
		hook: sedScripts,
	}, "sed")
	add(&spec{raw: true, hook: ddHook}, "dd") // KEY=VALUE... (ddOperands)
	add(&spec{
		opts: options("cxtruAdvzjJaZkpOhSWmo", "fCXTbIF", "create extract get list append update concatenate catenate "+
			"diff compare file= directory= verbose gzip gunzip bzip2 xz lzma zstd auto-compress keep-old-files "+
			"skip-old-files preserve-permissions same-permissions to-stdout dereference sparse verify touch no-same-owner "+
			"no-same-permissions numeric-owner exclude= exclude-from= files-from= wildcards no-wildcards anchored "+
			"strip-components= overwrite keep-newer-files one-file-system totals owner= group= mode= mtime= sort= format= "+
			"exclude-vcs exclude-vcs-ignores null show-transformed-names transform= xform= warning= record-size= "+
			"blocking-factor= force-local to-command= use-compress-program= info-script= new-volume-script= "+
			"checkpoint-action= rsh-command= rmt-command=").guarded(),
		does: does{
			"X T exclude-from files-from": readsList,
			"h dereference":               derefTree,
			"to-command use-compress-program I info-script F new-volume-script checkpoint-action rsh-command rmt-command": runsProgram,
		},
		rewrite: tarBundle,
		hook:    tarModes, // MEMBER...
	}, "tar")
	add(&spec{
		opts:     options("lvtzpoqnjCaLVXKMUuf", "dP", "").guarded(),
		does:     does{"l v t z p": listsOnly, "d": intoValue},
		args:     []role{readsFile, notPath}, // ARCHIVE MEMBER...
		extracts: true,
	}, "unzip")
	add(&spec{
		opts: options("avrlptgoDzhPnuciqWxHKLkm", "e", "archive verbose recursive links perms times group owner devices "+
			"specials compress human-readable progress partial dry-run update checksum itemize-changes quiet whole-file "+
			"one-file-system hard-links keep-dirlinks copy-links copy-dirlinks delete delete-after delete-before "+
			"delete-during delete-excluded exclude= include= exclude-from= include-from= stats ignore-existing size-only "+
			"existing prune-empty-dirs rsh= rsync-path=").guarded(),
		does: does{
			"e rsh rsync-path":          remoteShell,
			"n dry-run":                 dryRun,
			"L copy-links":              derefTree,
			"exclude-from include-from": readsList,
			"delete delete-after delete-before delete-during delete-excluded": mirrors,
		},
		transfer: syncs,
	}, "rsync")
	add(&spec{raw: true, hook: findExpression}, "find") // [-H|-L|-P] START... EXPRESSION
	tableMap = t
}
