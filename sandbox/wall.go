package sandbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vaultgate/vaultgate/zones"
)

// WallConfig is what a call's wall is built from: the agent's zone table
// and its [bash] settings. Run builds the plan (BuildWall) when the call
// starts, from the vault as it is then.
type WallConfig struct {
	Zones   *zones.Table
	Network bool   // bash.network: keep the host's network
	RunAs   string // bash.run_as: a user name, or ""
	// Required makes every layer mandatory: a layer that can't be raised
	// fails the call instead of running without it.
	Required bool
	// Layers are the layers to raise (see Probe); Required needs them all.
	Layers Layers
	// Limits bound the call's processes; zero fields take DefaultLimits.
	Limits Limits
	// Helper is the wall's helper binary, absolute (HelperBeside finds
	// vaultgate-wall); "" re-executes the running binary, whose main must
	// then call Helper when IsHelper says so. A helper that can't start
	// fails the call: there is no unwalled fallback.
	Helper string
	// Names, when set, answers which paths the wall covers by name
	// (control names, name patterns) from an index kept current, instead
	// of a walk of the whole vault; where it can't answer exactly the
	// call walks.
	Names *NameIndex
	// Overlay, when set, mounts the vault as an overlay inside the wall:
	// the vault is its read-only lower layer, and whatever the command
	// changes lands in Overlay.Upper, for the server to judge when the
	// command has ended. It needs Layers.Overlay: Required without it is
	// an error; best effort then builds the wall without the overlay.
	Overlay *Overlay
}

// Overlay is where one call's upper and work folders are: on a tmpfs the
// helper mounts in the call's own mount namespace (Memory), or folders on
// the host (txn.NewLayer makes them), never inside the vault, on
// overlayfs or on FUSE (see CheckOverlay).
type Overlay struct {
	Upper string `json:"upper,omitempty"`
	Work  string `json:"work,omitempty"`
	// Memory, when set, puts upper and work on a private tmpfs sized from
	// the call's caps (Upper and Work are then unused): the kernel stops a
	// write past them with ENOSPC while the command runs, and Result.Upper
	// hands the server the upper folder when the command has ended. It
	// needs Layers.MemoryLayer.
	Memory *MemoryLayer `json:"memory,omitempty"`
}

// MemoryLayer sizes a call's in-memory layer from its [bash] caps
// (max_changed_bytes, max_changed_files).
type MemoryLayer struct {
	MaxBytes int64 `json:"max_bytes"`
	MaxFiles int64 `json:"max_files"`
}

// Layers says which layers of the wall to raise.
type Layers struct {
	Mount    bool // mount namespace and the new root (pivot_root)
	Net      bool // network namespace (ignored with Network)
	Landlock int  // Landlock ABI to use; 0 none
	NoNew    bool // no_new_privs
	Caps     bool // drop every capability
	Rlimits  bool
	PidMax   bool // pid_max of the call's own pid namespace (Linux 6.14)
	RunAs    bool // switching to run_as is possible (a root server, the user exists)
	Overlay  bool // the vault can be mounted as an overlay (WallConfig.Overlay)
	// MemoryLayer: the overlay's upper layer can be a tmpfs of the call's
	// own (a tmpfs that takes overlayfs's records: user xattrs need Linux
	// 6.6 in a user namespace).
	MemoryLayer bool
}

// Limits bound what the call's processes may use.
type Limits struct {
	Procs    uint64 // processes (pid_max of the namespace; RLIMIT_NPROC with a uid of its own)
	AS       uint64 // address space per process, bytes
	FileSize uint64 // bytes per file written
	Files    uint64 // open descriptors per process
}

// DefaultLimits stop a fork bomb and a runaway writer on a small machine
// while leaving room for a build or a Python script.
var DefaultLimits = Limits{Procs: 512, AS: 8 << 30, FileSize: 1 << 30, Files: 1024}

// MountKind is what the wall puts at a path.
type MountKind string

const (
	MountRO    MountKind = "ro"    // the host path, bound read-only
	MountRW    MountKind = "rw"    // the host path, bound writable
	MountEmpty MountKind = "empty" // an empty read-only tmpfs (a folder) or an empty read-only file
)

// Mount is one step of the new root, outside the fixed system part.
type Mount struct {
	Path string    `json:"path"` // absolute, as on the host and inside the wall
	Kind MountKind `json:"kind"`
	Zone string    `json:"zone"` // the zone it stands for, for Describe
	// Dir tells an empty cover whether it stands over a folder.
	Dir bool `json:"dir"`
	// MakePoint lets the helper create a missing mount point, but only in
	// a tmpfs of its own (a parent that the wall covered).
	MakePoint bool `json:"make_point,omitempty"`
}

// Access is one Landlock grant beyond read-only.
type Access string

const (
	AccessWrite  Access = "write"  // everything: create, change, remove, rename, link
	AccessChange Access = "change" // create and change files and folders; never remove or rename
)

// Grant is one Landlock rule: a path and what may be done beneath it.
type Grant struct {
	Path   string `json:"path"`
	Access Access `json:"access"`
	Zone   string `json:"zone"`
}

// Placeholder is an empty folder (or file) that Run creates on the host
// before the call, so that a name the agent must never create (.claude,
// .git, a protected zone's missing root) exists to be covered read-only,
// and removes after the call if it is still empty.
type Placeholder struct {
	Path string `json:"path"`
	Dir  bool   `json:"dir"`
}

// Wall is the plan of one call's wall: data that Describe prints and the
// helper turns into mounts and Landlock rules. Only paths listed here
// are there; the fixed system part (read-only /usr, /bin, /lib*, the few
// /etc files programs need, a fresh /proc, a minimal /dev, empty /tmp,
// /var/tmp, /run and home) is the same for every call.
type Wall struct {
	Vault  string   `json:"vault"`
	Home   string   `json:"home"`   // HOME inside the wall: a fresh, empty folder
	Hide   []string `json:"hide"`   // host folders covered by an empty tmpfs (the server's home)
	Mounts []Mount  `json:"mounts"` // parents before children
	Grants []Grant  `json:"grants"`
	// Scratch are the call's private, empty folders and what Landlock
	// allows in them: everything, unless a zone lies beneath one (a vault
	// in /tmp or in the home folder), since a right granted on a folder
	// holds for all beneath it; then creating and writing only, and
	// TMPDIR points to the private home, where everything is allowed.
	Scratch      []Grant       `json:"scratch"`
	TmpDir       string        `json:"tmpdir,omitempty"`
	Placeholders []Placeholder `json:"placeholders,omitempty"`
	Network      bool          `json:"network"`
	RunAs        *User         `json:"run_as,omitempty"`
	Limits       Limits        `json:"limits"`
	Layers       Layers        `json:"layers"`
	Required     bool          `json:"required"`
	// Overlay, when set, is the vault's upper and work folders: the
	// helper mounts the vault as an overlay, and binds the writable zones
	// inside the vault from it instead of from the host.
	Overlay *Overlay `json:"overlay,omitempty"`
	// NoOverlay says why an overlay that was asked for is not there (best
	// effort), for Describe.
	NoOverlay string `json:"-"`
	// HostMountNS is the server's mount namespace (inode): the helper
	// refuses to build anything unless it is in another one.
	HostMountNS uint64 `json:"host_mount_ns"`
	// Helper is the helper that builds this wall (WallConfig.Helper); the
	// helper itself has no use for it.
	Helper string `json:"-"`
}

// User is a run_as user, resolved.
type User struct {
	Name string `json:"name"`
	UID  int    `json:"uid"`
	GID  int    `json:"gid"`
}

// Probe is what the kernel and the process give the wall, found once by
// starting the helper in probe mode in the wall's namespaces.
type Probe struct {
	Layers  Layers
	Missing map[string]string // layer → why it is missing
	Root    bool              // the server runs as root
}

// For returns the layers to raise for an agent's [bash] settings. With
// required, a layer that is missing is an error naming it; otherwise the
// layers there are, are raised.
func (p Probe) For(network, runAs, required bool) (Layers, error) {
	L := p.Layers
	if !L.Mount {
		// Without the new root there is no wall to speak of: Landlock
		// alone can't hide a hidden zone inside a readable one.
		L = Layers{}
	}
	if !runAs {
		L.RunAs = false
	}
	if !required {
		return L, nil
	}
	var missing []string
	need := func(ok bool, name string) {
		if !ok {
			why := p.Missing[name]
			if why == "" {
				why = "unavailable"
			}
			missing = append(missing, name+" ("+why+")")
		}
	}
	need(p.Layers.Mount, "mount namespace")
	if !network {
		need(p.Layers.Net, "network namespace")
	}
	need(p.Layers.Landlock >= 3, "Landlock")
	need(p.Layers.NoNew, "no_new_privs")
	need(p.Layers.Caps, "dropping capabilities")
	need(p.Layers.Rlimits, "rlimits")
	// Every walled call runs on an overlay of the vault: the changes it
	// made are judged before they reach the vault.
	need(p.Layers.Overlay, "overlay")
	// A process bound that holds: pid_max of the namespace, or
	// RLIMIT_NPROC for a uid of the call's own.
	need(p.Layers.PidMax || runAs || !p.Root, "pid_max per pid namespace")
	if runAs {
		need(p.Layers.RunAs, "run_as")
	}
	if len(missing) > 0 {
		return Layers{}, &WallError{Missing: missing}
	}
	return L, nil
}

// WallError names the layers a required wall lacks.
type WallError struct{ Missing []string }

func (e *WallError) Error() string {
	return "the OS wall is required but missing: " + strings.Join(e.Missing, "; ")
}

// maxControlWalk bounds the walk that finds control names in a vault
// whose name index can't be exact (see NameIndex): past it the call fails
// rather than run with names it could not look at.
const maxControlWalk = 10_000_000

// BuildWall turns the zone table into the wall's plan for the vault as it
// is now. home is the HOME the command gets. It reads the vault (which
// zone roots exist, where .git, .claude, .vscode and .mcp.json are) but
// changes nothing: the placeholders it lists are created by Run.
func BuildWall(cfg *WallConfig, home string) (*Wall, error) {
	t := cfg.Zones
	if t == nil {
		return nil, errors.New("sandbox: wall: no zone table")
	}
	vault := t.Vault()
	w := &Wall{Vault: vault, Home: home, Network: cfg.Network, Limits: cfg.Limits, Layers: cfg.Layers, Required: cfg.Required, Helper: cfg.Helper}
	if w.Limits == (Limits{}) {
		w.Limits = DefaultLimits
	}
	if o := cfg.Overlay; o != nil {
		switch {
		case cfg.Layers.Overlay && cfg.Layers.Mount && o.Memory != nil:
			if !cfg.Layers.MemoryLayer {
				return nil, errors.New("sandbox: wall: an in-memory layer was asked for, but this kernel's tmpfs can't hold an overlay's upper layer here")
			}
			if o.Memory.MaxBytes <= 0 || o.Memory.MaxFiles <= 0 {
				return nil, errors.New("sandbox: wall: an in-memory layer needs positive caps")
			}
			m := *o.Memory
			w.Overlay = &Overlay{Memory: &m}
		case cfg.Layers.Overlay && cfg.Layers.Mount:
			w.Overlay = &Overlay{Upper: o.Upper, Work: o.Work}
		case cfg.Required:
			return nil, &WallError{Missing: []string{"overlay (this kernel can't mount the vault as an overlay here)"}}
		default:
			w.NoOverlay = "this kernel can't mount the vault as an overlay here"
		}
	}
	if h, err := os.UserHomeDir(); err == nil && filepath.IsAbs(h) && h != "/" {
		w.Hide = append(w.Hide, filepath.Clean(h))
	}

	// The nodes of the vault whose zone may differ from their parent's:
	// the root, every configured entry, control paths (config, audit,
	// state), and every control name, found or to be kept from appearing.
	type node struct {
		rel     string
		mode    zones.Mode
		control bool // config, audit log or state folder: never visible
	}
	// zoneOf judges rel as it is spelled on disk; a name that can't be a
	// path is in no zone.
	zoneOf := func(rel string) zones.Mode {
		p, err := zones.Normalize(vault, rel)
		if err != nil || p.Outside() {
			return zones.NoZone
		}
		return t.Zone(p)
	}
	nodes := map[string]node{".": {rel: ".", mode: t.Zone(zones.VaultRoot())}}
	entries := map[string]bool{}
	var absolute []zones.Root
	for _, e := range t.Entries() {
		if e.Path.Outside() {
			absolute = append(absolute, e)
			continue
		}
		rel := e.Path.String()
		entries[rel] = true
		nodes[rel] = node{rel: rel, mode: t.Zone(e.Path)}
	}
	for _, e := range t.Within(zones.VaultRoot()) {
		if e.Pattern {
			continue // what it covers is found by the walk below
		}
		if rel := e.Path.String(); !entries[rel] {
			nodes[rel] = node{rel: rel, mode: e.Mode, control: true}
		}
	}
	found, err := coveredByName(cfg.Names, vault, t)
	if err != nil {
		return nil, err
	}
	for _, rel := range found {
		if _, ok := nodes[rel]; !ok {
			nodes[rel] = node{rel: rel, mode: zoneOf(rel)}
		}
	}
	// Where a program could create a control name that tools outside the
	// wall act on (git, Claude Code, VS Code read them at a project's
	// root): at the vault root and at the root of each zone it may create
	// in. Absent ones get a placeholder, so the name is there, read-only.
	roots := []string{"."}
	for p := range entries {
		if zoneOf(p).Allows(zones.OpCreate) {
			roots = append(roots, p)
		}
	}
	for _, r := range roots {
		for _, name := range zones.ControlNames {
			rel := path.Join(r, name)
			if _, ok := nodes[rel]; !ok {
				nodes[rel] = node{rel: rel, mode: zoneOf(rel)}
			}
		}
	}
	for _, rel := range zones.ControlRoots { // those of the vault's root alone
		if _, ok := nodes[rel]; !ok {
			nodes[rel] = node{rel: rel, mode: zoneOf(rel)}
		}
	}

	order := make([]string, 0, len(nodes))
	for p := range nodes {
		order = append(order, p)
	}
	slices.SortFunc(order, byDepth)
	// kindOf is what a node is inside the wall; view is the kind its
	// nearest configured ancestor gives, so a node needs a mount only
	// where the two differ.
	kindOf := map[string]MountKind{}
	for _, rel := range order {
		n := nodes[rel]
		kind := kindFor(n.mode)
		if n.control {
			kind = MountEmpty
		}
		kindOf[rel] = kind
		abs := path.Join(vault, rel)
		if rel == "." {
			w.Mounts = append(w.Mounts, Mount{Path: vault, Kind: kind, Zone: n.mode.String(), Dir: true, MakePoint: true})
			continue
		}
		parent := nearest(rel, kindOf)
		view := kindOf[parent]
		if kind == view {
			continue
		}
		fi, err := os.Lstat(abs)
		switch {
		case err == nil && fi.Mode()&fs.ModeSymlink != 0:
			// A link is judged where it leads; a mount would follow it.
			delete(kindOf, rel)
		case err == nil:
			w.Mounts = append(w.Mounts, Mount{Path: abs, Kind: kind, Zone: n.mode.String(), Dir: fi.IsDir(), MakePoint: view == MountEmpty})
		case errors.Is(err, fs.ErrNotExist):
			switch {
			case w.Overlay != nil:
				// On the overlay a name made during the call exists only in
				// the upper layer, and the diff judges it (a control name
				// is protected at any depth): nothing is made in the vault
				// to cover it.
				delete(kindOf, rel)
			case view == MountRW && kind != MountRW:
				// The agent could create it: make it exist, covered.
				dir := !zones.ControlIsFile(rel)
				if err := w.placeholder(vault, rel, dir, kindOf); err != nil {
					return nil, err
				}
				w.Mounts = append(w.Mounts, Mount{Path: abs, Kind: kind, Zone: n.mode.String(), Dir: dir})
			default:
				// Under a read-only or empty parent nothing can create
				// it; a zone that does not exist has nothing to bind.
				delete(kindOf, rel)
			}
		default:
			return nil, fmt.Errorf("sandbox: wall: %s: %w", abs, err)
		}
	}
	for _, e := range absolute {
		kind := kindFor(e.Mode)
		fi, err := os.Lstat(e.Path.String())
		if err != nil || fi.Mode()&fs.ModeSymlink != 0 {
			continue // nothing to bind, or a link (judged where it leads)
		}
		if kind == MountEmpty && !underSystem(e.Path.String()) {
			continue // not bound at all, so not there
		}
		w.Mounts = append(w.Mounts, Mount{Path: e.Path.String(), Kind: kind, Zone: e.Mode.String(), Dir: fi.IsDir(), MakePoint: true})
		for _, c := range t.Within(e.Path) {
			if c.Pattern {
				continue // patterns cover the vault's paths, not one outside it
			}
			if fc, err := os.Lstat(c.Path.String()); err == nil && fc.Mode()&fs.ModeSymlink == 0 {
				w.Mounts = append(w.Mounts, Mount{Path: c.Path.String(), Kind: MountEmpty, Zone: c.Mode.String(), Dir: fc.IsDir()})
			}
		}
	}
	slices.SortStableFunc(w.Mounts, func(a, b Mount) int { return byDepth(a.Path, b.Path) })

	// Landlock: read-only everywhere, and these grants. Grants add up
	// beneath a path (Landlock can't take a right away below where it
	// gave it), so a protected zone inside an edit zone holds by its
	// read-only mount, not by Landlock; and removal stays out of every
	// edit and create zone because none of their ancestors grants it.
	// Under the overlay nothing a command does reaches the vault before
	// the diff of the upper folder has been judged, so a writable zone of
	// the vault may remove and rename too: a sed -i, an editor's save.
	for _, rel := range order {
		n := nodes[rel]
		if n.control || !entries[rel] && rel != "." {
			continue
		}
		if g, ok := grantFor(n.mode); ok {
			if w.Overlay != nil {
				g = AccessWrite
			}
			w.Grants = append(w.Grants, Grant{Path: path.Join(vault, rel), Access: g, Zone: n.mode.String()})
		}
	}
	for _, e := range absolute {
		if g, ok := grantFor(e.Mode); ok {
			w.Grants = append(w.Grants, Grant{Path: e.Path.String(), Access: g, Zone: e.Mode.String()})
		}
	}
	for _, d := range append(append([]string{}, scratchDirs...), w.Hide...) {
		a := AccessWrite
		for _, g := range w.Grants {
			if strings.HasPrefix(g.Path, d+"/") {
				a = AccessChange
			}
		}
		w.Scratch = append(w.Scratch, Grant{Path: d, Access: a, Zone: "scratch"})
		if d == "/tmp" && a == AccessChange && home != "" {
			w.TmpDir = home
		}
	}
	if home != "" {
		w.Scratch = append(w.Scratch, Grant{Path: home, Access: AccessWrite, Zone: "home"})
	}
	return w, nil
}

// placeholder records rel's placeholder, and those of its missing parents.
func (w *Wall) placeholder(vault, rel string, dir bool, kindOf map[string]MountKind) error {
	var missing []Placeholder
	for p := rel; p != "." && p != "/"; p = path.Dir(p) {
		abs := path.Join(vault, p)
		if _, err := os.Lstat(abs); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("sandbox: wall: %s: %w", abs, err)
		}
		missing = append(missing, Placeholder{Path: abs, Dir: p != rel || dir})
	}
	slices.Reverse(missing)
	for _, m := range missing {
		if !slices.Contains(w.Placeholders, m) {
			w.Placeholders = append(w.Placeholders, m)
		}
	}
	return nil
}

// kindFor is what the wall shows of a zone, from the ops its kind allows.
// Neither a mount nor Landlock (which grants read from "/") can make a
// folder writable but unreadable, so a kind that may not be read is
// covered even if it may be created in: there only the file tools write.
func kindFor(m zones.Mode) MountKind {
	switch {
	case !m.Allows(zones.OpRead):
		return MountEmpty
	case m.Allows(zones.OpCreate):
		return MountRW
	}
	return MountRO
}

// grantFor is the Landlock right a zone's folder gets beyond reading: the
// removal and renaming of write where the kind allows delete, else create
// and change where it allows create, and none where it is not writable.
func grantFor(m zones.Mode) (Access, bool) {
	switch {
	case kindFor(m) != MountRW:
		return "", false
	case m.Allows(zones.OpDelete):
		return AccessWrite, true
	}
	return AccessChange, true
}

// nearest returns the closest ancestor of rel that has a kind.
func nearest(rel string, kindOf map[string]MountKind) string {
	for p := path.Dir(rel); ; p = path.Dir(p) {
		if _, ok := kindOf[p]; ok || p == "." {
			return p
		}
	}
}

// within reports whether p is dir or lies inside it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

func byDepth(a, b string) int {
	da, db := strings.Count(a, "/"), strings.Count(b, "/")
	if a == "." {
		da = -1
	}
	if b == "." {
		db = -1
	}
	if da != db {
		return da - db
	}
	return strings.Compare(a, b)
}

// underSystem reports whether p lies under a folder the wall binds from
// the host whatever the zones say.
func underSystem(p string) bool {
	for _, d := range systemDirs {
		if p == "/"+d || strings.HasPrefix(p, "/"+d+"/") {
			return true
		}
	}
	return p == "/etc" || strings.HasPrefix(p, "/etc/")
}

// coveredByName is the paths the wall covers by name: the index's answer
// where it has an exact one, else a walk's.
func coveredByName(x *NameIndex, vault string, t *zones.Table) ([]string, error) {
	if x != nil {
		if found, err := x.Covered(t); err == nil {
			return found, nil
		}
	}
	return controlNames(vault, t)
}

// controlNames walks the vault, without following links, for the paths
// the wall must cover or keep read-only wherever they are (see coverOf).
// It looks inside a covered folder that may still be read (.claude), for
// what a pattern hides in it, but not inside one that may not be, nor
// inside .git (zones.HoldsCopies).
func controlNames(vault string, t *zones.Table) ([]string, error) {
	var out []string
	seen := 0
	err := filepath.WalkDir(vault, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == vault {
				return err
			}
			return nil // unreadable: the wall can't show it to the agent either way
		}
		if seen++; seen > maxControlWalk {
			return fmt.Errorf("over %d entries", maxControlWalk)
		}
		if p == vault {
			return nil
		}
		rel, _ := filepath.Rel(vault, p)
		rel = filepath.ToSlash(rel)
		covered, readable := coverOf(vault, t, rel)
		if covered {
			out = append(out, rel)
		}
		if d.IsDir() && (covered && !readable || zones.HoldsCopies(d.Name())) {
			return fs.SkipDir // covered whole
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sandbox: wall: finding control names in %s: %w", vault, err)
	}
	return out, nil
}

// coverOf is the one answer, for the walk and the index alike, to whether
// the wall covers rel by its name — a control name, or a path a name
// pattern of t names (zones.Table.PatternNames) — and whether what it
// covers may still be read (then a path inside it may need a cover of its
// own: a hidden .env in a read-only .claude). Both meet a folder before
// what it holds, so a path inside a folder a pattern names is that
// folder's: they ask of each name alone, which costs no whole path's
// normalising unless the name is covered.
func coverOf(vault string, t *zones.Table, rel string) (covered, readable bool) {
	if !zones.IsControlName(path.Base(rel)) && !t.PatternNames(vault, rel) {
		return false, true
	}
	at, err := zones.Normalize(vault, rel)
	return true, err == nil && t.Zone(at).Allows(zones.OpRead)
}

// scratchDirs are the call's private, empty folders.
var scratchDirs = []string{"/tmp", "/var/tmp", "/run", "/dev/shm"}

// systemDirs are bound read-only from the host (or recreated as the same
// symlink, on a merged-/usr system).
var systemDirs = []string{"usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32"}

// etcFiles are the parts of /etc that programs need to start and to name
// users, hosts and time zones; the rest of /etc (shadow, ssh host keys,
// sudoers, the server's own config) is not there.
var etcFiles = []string{
	"passwd", "group", "nsswitch.conf", "hosts", "host.conf", "resolv.conf", "gai.conf",
	"services", "protocols", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime",
	"timezone", "locale.alias", "locale.conf", "default/locale", "mime.types", "magic", "magic.mime",
	"ssl/certs", "ca-certificates", "ca-certificates.conf", "alternatives", "os-release",
	"inputrc", "terminfo", "gitconfig", "mtab", "perl", "python3", "python3.11", "xdg/mime",
}

// Describe prints the plan: what each path is inside the wall, and where
// Landlock lets programs write and remove.
func (w *Wall) Describe(out io.Writer) {
	fmt.Fprintf(out, "wall for %s\n", w.Vault)
	switch {
	case w.Overlay != nil && w.Overlay.Memory != nil:
		fmt.Fprintf(out, "  overlay  %-28s read-only below; every change goes to the call's own tmpfs (%s), judged when the command has ended\n", w.Vault, w.Overlay.Memory.tmpfsOptions())
	case w.Overlay != nil:
		fmt.Fprintf(out, "  overlay  %-28s read-only below; every change goes to %s, judged when the command has ended\n", w.Vault, w.Overlay.Upper)
	case w.NoOverlay != "":
		fmt.Fprintf(out, "  overlay  none: %s; writes reach the vault directly, as the zones below allow\n", w.NoOverlay)
	}
	fmt.Fprintf(out, "  system   read-only: /%s, /etc (%d files); fresh /proc; minimal /dev; empty /tmp /var/tmp /run %s\n",
		strings.Join(systemDirs, " /"), len(etcFiles), strings.Join(w.Hide, " "))
	for _, m := range w.Mounts {
		what := map[MountKind]string{MountRO: "read-only", MountRW: "writable", MountEmpty: "covered (empty, read-only)"}[m.Kind]
		if m.Kind == MountRW && w.Overlay != nil && within(m.Path, w.Vault) {
			what = "writable, in the overlay"
		}
		fmt.Fprintf(out, "  mount    %-28s %-10s %s\n", m.Path, m.Zone, what)
	}
	for _, p := range w.Placeholders {
		fmt.Fprintf(out, "  create   %-28s (absent: kept empty for the call, removed after)\n", p.Path)
	}
	fmt.Fprintf(out, "  landlock read everywhere, and:\n")
	for _, g := range append(append([]Grant{}, w.Scratch...), w.Grants...) {
		what := map[Access]string{AccessWrite: "create, change, remove, rename", AccessChange: "create and change; no remove, no rename"}[g.Access]
		fmt.Fprintf(out, "  landlock %-28s %-10s %s\n", g.Path, g.Zone, what)
	}
	net := "none (own network namespace)"
	if w.Network {
		net = "the host's"
	}
	fmt.Fprintf(out, "  network  %s\n", net)
	if w.RunAs != nil {
		fmt.Fprintf(out, "  user     %s (uid %d)\n", w.RunAs.Name, w.RunAs.UID)
	}
	fmt.Fprintf(out, "  limits   %d processes, %d MiB address space, %d MiB per file, %d files\n",
		w.Limits.Procs, w.Limits.AS>>20, w.Limits.FileSize>>20, w.Limits.Files)
	if w.Helper == "" {
		fmt.Fprintf(out, "  helper   self (this binary, re-executed; no %s beside it)\n", HelperBinary)
	} else {
		fmt.Fprintf(out, "  helper   %s\n", w.Helper)
	}
}
