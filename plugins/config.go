package plugins

import (
	"log/slog"
	"time"

	"github.com/runbox/runbox/plugins/bundle"
	"github.com/runbox/runbox/sdk"
)

// Config configures a Host. The zero value is usable: no plugins, no
// on-disk cache, defaults below.
type Config struct {
	// Builtins are the plugins compiled into the binary, handed over by the
	// caller (plugins/builtin, wired in cmd/runboxd): the runtime knows
	// none of its own.
	Builtins []Builtin
	// CacheDir holds wazero's compilation cache (e.g. ~/.cache/runbox/wazero).
	// Empty means compile in memory each process (~1 s per module, cold).
	CacheDir string
	// Dirs are searched for user plugins: *.wasm files directly inside, and
	// installed bundles (sub-directories with runbox-bundle.json, see Install).
	Dirs []string
	// Files are extra *.wasm files to load (e.g. the plugin under test):
	// named by the caller, they load under RequireSigned too.
	Files []string
	// RequireSigned, when not nil, loads from Dirs only the plugins a
	// trusted key vouches for: those of installed bundles whose signature
	// verifies with a key of its Trust (bundle.CheckSignature, as install
	// checks it). Loose modules, bundles installed unsigned
	// (--allow-unsigned) and bundles whose signature no longer verifies
	// with a trusted key are refused (StatusRefused, never run), and
	// their rules files not read. The built-ins are trusted.
	RequireSigned *SignedOnly
	// Logger receives warnings about failing plugins. Default slog.Default().
	Logger *slog.Logger
	// StateFile, when set, keeps which plugins the circuit breaker switched
	// off, why and until when, across processes: the daemon writes it,
	// `plugins ls` shows it, and a restarted daemon (or one that unloaded
	// its plugins while idle) keeps them off until their cooldown ends.
	StateFile string

	// CallTimeout bounds one call into a plugin. Default 2s.
	CallTimeout time.Duration
	// InitTimeout bounds instantiating a module (its _initialize). Default 10s.
	InitTimeout time.Duration
	// LoadTimeout bounds loading a module as a whole: compile, first
	// instance (_initialize), ABI check and describe. A module not loaded
	// by then is given up (failed) and never waited for again. Default
	// 30s: what it stops is a module that never finishes loading, not a
	// cold compile of a large one on a busy machine (which, cut, still
	// fills the compilation cache for the next process).
	LoadTimeout time.Duration
	// MemoryLimitPages caps each instance's linear memory, in 64 KiB pages.
	// Default 2048 (128 MiB).
	MemoryLimitPages uint32
	// RecycleBytes: an instance whose memory grew past this is closed after
	// its call instead of being pooled. Default 64 MiB.
	RecycleBytes uint64
	// PoolSize is how many idle instances are kept per module. Default 2.
	PoolSize int
	// MaxInstances caps live instances per module; further callers wait.
	// Default 4.
	MaxInstances int
	// MaxInputBytes and MaxOutputBytes bound the JSON crossing the ABI in
	// either direction. Default 4 MiB and 1 MiB.
	MaxInputBytes  int
	MaxOutputBytes int
	// MaxLineBytes truncates an output line before a progress plugin sees it.
	// Default 8 KiB.
	MaxLineBytes int
	// BatchLines and BatchBytes bound a batch sent to runbox_parse.
	// Default 256 lines and 64 KiB.
	BatchLines int
	BatchBytes int
	// FailureThreshold consecutive failures switch a plugin off for
	// Cooldown (circuit breaker). Default 3 and 5 minutes.
	FailureThreshold int
	Cooldown         time.Duration
	// LogBytes bounds the guest stdout/stderr kept per module. Default 4 KiB.
	LogBytes int

	// noInterrupt turns off WithCloseOnContextDone (benchmarks only: a
	// runaway guest is then not stopped).
	noInterrupt bool
}

// SignedOnly is the policy that only signed plugins load (Config.
// RequireSigned).
type SignedOnly struct {
	// Trust holds the trusted keys; nil trusts none.
	Trust *bundle.TrustStore
	// Why says what set the policy and Off how to lift it, for the
	// refusals: "RUNBOX_REQUIRE_SIGNED is set", "unset
	// RUNBOX_REQUIRE_SIGNED".
	Why, Off string
}

// Builtin is a plugin module that comes with the binary rather than from
// disk (its source is "builtin:"+Name), with what is known of it without
// loading it, so that a Host loads it only once it is needed (docs/
// RATIONALE.md, "analyze loads only what a log needs").
type Builtin struct {
	Name string
	Wasm []byte
	// Kind is the one kind the module implements; "" when not known, and
	// the module is then loaded at once, like a user plugin.
	Kind sdk.Kind
	// Manifest, when not nil, is what the module describes: a progress
	// plugin's prefilter then says which lines could reach it before it
	// is loaded (Host.ProgressFilter).
	Manifest *sdk.Manifest
}

func (c Config) withDefaults() Config {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	if c.CallTimeout <= 0 {
		c.CallTimeout = 2 * time.Second
	}
	if c.InitTimeout <= 0 {
		c.InitTimeout = 10 * time.Second
	}
	if c.LoadTimeout <= 0 {
		c.LoadTimeout = 30 * time.Second
	}
	if c.MemoryLimitPages == 0 {
		c.MemoryLimitPages = 2048
	}
	if c.RecycleBytes == 0 {
		c.RecycleBytes = 64 << 20
	}
	def(&c.PoolSize, 2)
	def(&c.MaxInstances, 4)
	def(&c.MaxInputBytes, 4<<20)
	def(&c.MaxOutputBytes, 1<<20)
	def(&c.MaxLineBytes, 8<<10)
	def(&c.BatchLines, 256)
	def(&c.BatchBytes, 64<<10)
	def(&c.FailureThreshold, 3)
	def(&c.LogBytes, 4<<10)
	if c.Cooldown <= 0 {
		c.Cooldown = 5 * time.Minute
	}
	return c
}
