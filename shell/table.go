package shell

import (
	"github.com/vaultgate/vaultgate/zones"
)

type handler func(a *analyzer, st *state, c *cmdCall)

// simple describes a command whose operands all get one op.
type simple struct {
	spec         optSpec
	op           zones.Op
	recursive    []string // options that make operands whole subtrees
	follows      []string // options that make the recursion follow symlinks
	alwaysSub    bool     // operands are always subtrees (du, rg)
	cwdIfNone    bool     // no path operand means the working directory
	cwdIfRec     bool     // ... when recursive (grep -r)
	patternFirst bool     // the first operand is a pattern, unless patOpts is given
	patOpts      []string
	noPaths      bool     // operands are not paths
	readOpts     []string // option values that are files read
	writeOpts    []string // option values that are files written (create or modify)
	execOpts     []string // options that run a program
	lastWrite    int      // the operand at this 1-based index is an output file (uniq in out)
}

func (s *simple) run(a *analyzer, st *state, c *cmdCall) {
	opts, ops, ok := a.parse(st, c, &s.spec)
	if !ok {
		return
	}
	for _, o := range opts {
		for _, e := range s.execOpts {
			if o.name == e {
				a.exec(st, c.name, ProgramOption, c.name+" "+dash(e))
				return
			}
		}
	}
	a.emitPaths(st, values(opts, s.readOpts...), zones.OpRead, c.name, pathOpts{follow: true})
	a.emitPaths(st, values(opts, s.writeOpts...), zones.OpCreate, c.name, pathOpts{follow: true, mode: orCreate})
	if s.noPaths {
		return
	}
	if c.dynamic() {
		a.emit(Effect{Op: s.op, Unknown: true, Command: c.name})
	}
	if s.patternFirst && !has(opts, s.patOpts...) && len(ops) > 0 {
		ops = ops[1:]
	}
	if s.lastWrite > 0 && len(ops) >= s.lastWrite {
		a.pathEffect(st, ops[s.lastWrite-1], zones.OpCreate, c.name, pathOpts{follow: true, mode: orCreate})
		ops = ops[:s.lastWrite-1]
	}
	sub := s.alwaysSub || has(opts, s.recursive...)
	if sub && has(opts, s.follows...) {
		// Links inside the tree lead anywhere.
		a.emit(Effect{Op: s.op, Unknown: true, Command: c.name})
	}
	if len(ops) == 0 && (s.cwdIfNone || s.cwdIfRec && sub) {
		ops = []field{litField(".")}
	}
	a.emitPaths(st, ops, s.op, c.name, pathOpts{follow: true, subtree: sub})
}

func dash(n string) string {
	if len(n) == 1 {
		return "-" + n
	}
	return "--" + n
}

func read(flags, valued, long string) *simple {
	return &simple{spec: optSpec{flags: flags, valued: valued, long: longs(long)}, op: zones.OpRead}
}

var table map[string]handler

func init() {
	t := map[string]handler{}
	add := func(s *simple, names ...string) {
		for _, n := range names {
			t[n] = s.run
		}
	}
	add(read("AbeEnstTuv", "", "show-all number-nonblank show-ends number squeeze-blank show-tabs show-nonprinting"), "cat")
	add(read("s", "", ""), "tac", "rev")
	h := read("qvz", "cn", "bytes= lines= quiet silent verbose zero-terminated")
	h.spec.numeric = true
	add(h, "head")
	tl := read("fFqvzr", "cnsp", "bytes= lines= quiet silent verbose zero-terminated follow? retry sleep-interval= pid= max-unchanged-stats=")
	tl.spec.numeric = true
	add(tl, "tail")
	wc := read("clmwL", "", "bytes chars lines words max-line-length total= files0-from=")
	wc.readOpts = []string{"files0-from"}
	add(wc, "wc")
	grep := read("EFGPiyvwxcLlmoqsbHhnTZzUraRIV", "efABCmdD",
		"extended-regexp fixed-strings basic-regexp perl-regexp regexp= file= ignore-case no-ignore-case word-regexp line-regexp "+
			"null-data no-messages invert-match version help max-count= byte-offset line-number line-buffered with-filename no-filename "+
			"label= only-matching quiet silent binary-files= text directories= devices= recursive dereference-recursive include= exclude= "+
			"exclude-from= exclude-dir= files-without-match files-with-matches count initial-tab null color? colour? after-context= "+
			"before-context= context= binary")
	grep.recursive = []string{"r", "R", "recursive", "dereference-recursive"}
	grep.cwdIfRec = true
	grep.follows = []string{"R", "dereference-recursive"}
	grep.patternFirst, grep.patOpts = true, []string{"e", "f", "regexp", "file"}
	grep.readOpts = []string{"f", "file", "exclude-from"}
	add(grep, "grep", "egrep", "fgrep")
	rg := read("iSswxvnNlcHIuLFUPaoqz0.e", "efgtTmABCrMj",
		"ignore-case smart-case case-sensitive word-regexp line-regexp invert-match line-number no-line-number files-with-matches "+
			"count with-filename no-filename no-ignore hidden follow fixed-strings multiline pcre2 text only-matching quiet regexp= "+
			"file= glob= iglob= type= type-not= max-count= after-context= before-context= context= replace= max-columns= "+
			"max-depth= maxdepth= color= colors= no-heading heading json files type-list sort= sortr= trim vimgrep column "+
			"null stats no-messages unrestricted threads= max-filesize= binary no-ignore-vcs no-config pre= pre-glob= search-zip "+
			"ignore-file= count-matches passthru byte-offset engine= encoding= crlf")
	rg.alwaysSub, rg.cwdIfNone = true, true
	rg.follows = []string{"L", "follow"}
	rg.patternFirst, rg.patOpts = true, []string{"e", "f", "regexp", "file", "files", "type-list"}
	rg.readOpts = []string{"f", "file", "ignore-file"}
	rg.execOpts = []string{"pre", "z", "search-zip"}
	add(rg, "rg")
	ls := read("aAbBcCdfFgGhHiklLmnNopqQrRsStuUvwxXZ1", "ITw",
		"all almost-all escape ignore-backups color? directory classify file-type format= full-time group-directories-first "+
			"no-group human-readable si dereference-command-line dereference hide= hyperlink? indicator-style= inode ignore= kibibytes "+
			"literal numeric-uid-gid hide-control-chars show-control-chars quote-name quoting-style= reverse recursive size sort= "+
			"time= time-style= tabsize= width= context zero block-size= author")
	ls.recursive, ls.cwdIfNone = []string{"R", "recursive"}, true
	ls.follows = []string{"L", "dereference"}
	add(ls, "ls", "dir", "vdir")
	sorts := read("bdfgiMhnRrVcCmsuz", "koSt",
		"ignore-leading-blanks dictionary-order ignore-case general-numeric-sort ignore-nonprinting month-sort human-numeric-sort "+
			"numeric-sort random-sort reverse version-sort check? merge stable unique zero-terminated key= output= field-separator= "+
			"buffer-size= parallel= sort= debug random-source= files0-from= compress-program=")
	sorts.spec.dynamic = true
	sorts.writeOpts = []string{"o", "output"}
	sorts.readOpts = []string{"random-source", "files0-from"}
	sorts.execOpts = []string{"compress-program"}
	add(sorts, "sort")
	uniq := read("cdDiuz", "fsw", "count repeated all-repeated? ignore-case unique zero-terminated skip-fields= skip-chars= check-chars= group?")
	uniq.lastWrite = 2
	uniq.spec.dynamic = true
	add(uniq, "uniq")
	add(read("nsz", "bcdf", "bytes= characters= delimiter= fields= complement only-delimited output-delimiter= zero-terminated"), "cut")
	tr := read("cCdst", "", "complement delete squeeze-repeats truncate-set1")
	tr.noPaths = true
	add(tr, "tr")
	diff := read("qsuNaiwbBEtTpycrZ", "UCFIlxXS", "brief report-identical-files unified= context= new-file text ignore-case "+
		"ignore-all-space ignore-space-change ignore-blank-lines recursive color? side-by-side width= normal suppress-common-lines "+
		"show-function-line= label= exclude= ignore-matching-lines= strip-trailing-cr no-dereference expand-tabs initial-tab "+
		"minimal speed-large-files horizon-lines= tabsize= suppress-blank-empty")
	diff.recursive = []string{"r", "recursive"}
	diff.follows = []string{"r", "recursive"} // diff -r follows links inside the trees
	diff.readOpts = []string{"X"}
	add(diff, "diff")
	add(read("blsz", "in", "print-bytes verbose quiet silent bytes= ignore-initial= zero"), "cmp")
	add(read("bhiLNkz0", "F", "brief mime mime-type mime-encoding dereference no-dereference keep-going print0 separator= uncompress"), "file")
	add(read("LftZ", "c", "dereference file-system terse format= printf= cached="), "stat")
	du := read("0abcDhHklLmsSxPt", "dBX", "all apparent-size bytes total dereference-args human-readable si dereference "+
		"count-links separate-dirs summarize one-file-system max-depth= block-size= exclude= threshold= time? time-style= inodes null no-dereference")
	du.alwaysSub, du.cwdIfNone = true, true
	du.follows = []string{"L", "dereference"}
	add(du, "du")
	add(read("ahHiklPTvx", "tBx", "all human-readable si inodes local portability print-type output? total type= exclude-type= block-size= sync no-sync"), "df")
	add(read("LPemqsvz", "", "canonicalize-existing canonicalize-missing logical physical quiet strip no-symlinks zero relative-to= relative-base="), "realpath")
	add(read("fmnqsevz", "", "canonicalize canonicalize-existing canonicalize-missing no-newline quiet silent verbose zero"), "readlink")
	np := read("asz", "", "multiple suffix= zero")
	np.noPaths = true
	add(np, "basename")
	np2 := read("z", "", "zero")
	np2.noPaths = true
	add(np2, "dirname")
	for _, n := range []string{"md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum", "sum"} {
		add(read("bctwzr", "a", "binary check tag text warn strict quiet status ignore-missing zero algorithm= length= base64 raw untagged"), n)
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
	xxd.lastWrite = 2
	add(xxd, "xxd")
	add(read("bcdfilosvx", "ANjStw", "address-radix= endian= skip-bytes= read-bytes= format= output-duplicates strings= traditional width?"), "od")
	add(read("bcCdovx", "enfsL", "length= skip= format="), "hexdump")
	add(read("afw", "nteT", "all bytes= radix= encoding= print-file-name target= data"), "strings")
	shuf := read("erz", "inoS", "echo input-range= head-count= output= random-source= repeat zero-terminated")
	shuf.writeOpts, shuf.readOpts = []string{"o", "output"}, []string{"random-source"}
	shuf.spec.dynamic = true
	add(shuf, "shuf")
	add(read("i", "t", "initial tabs="), "expand")
	add(read("a", "t", "all first-only tabs="), "unexpand")
	for _, n := range []string{"true", "false", ":", "pwd", "sleep", "seq", "yes", "whoami", "id", "uname", "which",
		"type", "hostname", "nproc", "arch", "groups", "logname", "tty", "printenv", "locale", "getconf", "users",
		"help", "times", "umask", "jobs", "dirs", "caller", "exit", "return", "break", "continue", "shift", "uptime",
		"cal", "expr", "factor", "numfmt", "tput", "clear"} {
		t[n] = func(a *analyzer, st *state, c *cmdCall) {}
	}
	t["expr"] = func(a *analyzer, st *state, c *cmdCall) {} // string and integer operations only
	t["echo"] = func(a *analyzer, st *state, c *cmdCall) {}
	t["date"] = runDate
	t["printf"] = runPrintf
	t["jq"] = runJq
	t["test"] = runTest
	t["["] = runTest
	t["cd"] = runCd
	t["pushd"] = runCd
	t["popd"] = func(a *analyzer, st *state, c *cmdCall) { st.cwdKnown = false }
	t["set"] = runSet
	t["read"] = runRead
	t["wait"] = runWait
	t["unset"] = runUnset
	t["getopts"] = func(a *analyzer, st *state, c *cmdCall) {
		if len(c.args) >= 2 {
			a.setNames(st, c, c.args[1:2])
		}
	}
	t["mapfile"] = runMapfile
	t["readarray"] = runMapfile
	t["eval"] = runEval
	t["bash"] = runShell
	t["sh"] = runShell
	t["dash"] = runShell
	t["rbash"] = runShell
	t["env"] = runEnv
	t["nice"] = runWrapper("", "n", "adjustment=", true)
	t["nohup"] = runWrapper("", "", "", false)
	t["stdbuf"] = runWrapper("", "ioe", "input= output= error=", false)
	t["setsid"] = runWrapper("cfw", "", "ctty fork wait", false)
	t["ionice"] = runWrapper("t", "cnp", "class= classdata= pid= ignore", false)
	t["timeout"] = runTimeout
	t["command"] = runCommand
	t["builtin"] = runBuiltin
	t["exec"] = runExec
	t["time"] = runTimeProgram
	t["xargs"] = runXargs
	t["rm"] = runRm
	t["rmdir"] = runRmdir
	t["unlink"] = runUnlink
	t["mv"] = runMv
	t["cp"] = runCp
	t["install"] = runInstall
	t["ln"] = runLn
	t["touch"] = runTouch
	t["mkdir"] = runMkdir
	t["tee"] = runTee
	t["truncate"] = runTruncate
	t["dd"] = runDd
	t["sed"] = runSed
	t["chmod"] = runChmod
	t["chown"] = runChown
	t["chgrp"] = runChown
	t["tar"] = runTar
	t["unzip"] = runUnzip
	t["rsync"] = runRsync
	t["find"] = runFind
	table = t
}
