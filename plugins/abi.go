package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"

	"github.com/runbox/runbox/internal/tail"

	"github.com/runbox/runbox/sdk"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"
)

// ABI v1 export names (contract, docs/PLUGINS.md).
const (
	exportABIVersion = "runbox_abi_version"
	exportAlloc      = "runbox_alloc"
	exportDescribe   = "runbox_describe"
	exportPlan       = "runbox_plan"
	exportClassify   = "runbox_classify"
	exportParse      = "runbox_parse"
)

// Errors a caller (or a test) can branch on with errors.Is.
var (
	ErrTimeout        = errors.New("plugin call timed out")
	ErrOutputTooLarge = errors.New("plugin output too large")
	ErrInputTooLarge  = errors.New("plugin input too large")
	ErrGuest          = errors.New("plugin returned an error")
	ErrABI            = errors.New("plugin does not speak runbox ABI v1")
	ErrDisabled       = errors.New("plugin switched off after repeated failures")
	ErrLoadTimeout    = errors.New("plugin load timed out")
)

var instanceSeq atomic.Uint64

// instance is one live module instance. It serves one call at a time.
type instance struct {
	mod   api.Module
	alloc api.Function
	fns   map[string]api.Function
	// out is what the guest wrote to stdout/stderr during the current
	// call (or instantiation): its own message goes into the call's error.
	out *tail.Buffer
}

// newInstance instantiates compiled as a reactor with no FS, env, args or
// network; guest stdout/stderr go to logs.
func newInstance(ctx context.Context, r wazero.Runtime, compiled wazero.CompiledModule, logs io.Writer) (*instance, error) {
	out := tail.NewHeadTail(guestOutBytes)
	w := io.MultiWriter(logs, out)
	cfg := wazero.NewModuleConfig().
		WithName(fmt.Sprintf("plugin-%d", instanceSeq.Add(1))).
		WithStartFunctions("_initialize").
		WithStdout(w).WithStderr(w)
	mod, err := r.InstantiateModule(ctx, compiled, cfg)
	if err != nil {
		return nil, fmt.Errorf("instantiate: %w", guestSaid(out, callError(ctx, err)))
	}
	in := &instance{mod: mod, fns: map[string]api.Function{}, out: out}
	for _, name := range []string{exportABIVersion, exportAlloc, exportDescribe} {
		if in.fns[name] = mod.ExportedFunction(name); in.fns[name] == nil {
			_ = mod.Close(context.Background())
			return nil, fmt.Errorf("missing export %s: %w", name, ErrABI)
		}
	}
	for _, name := range []string{exportPlan, exportClassify, exportParse} {
		if f := mod.ExportedFunction(name); f != nil {
			in.fns[name] = f
		}
	}
	in.alloc = in.fns[exportAlloc]
	return in, nil
}

func (in *instance) close() { _ = in.mod.Close(context.Background()) }

// memBytes is the instance's current linear memory size.
func (in *instance) memBytes() uint64 { return uint64(in.mod.Memory().Size()) }

// abiVersion calls runbox_abi_version.
func (in *instance) abiVersion(ctx context.Context) (int32, error) {
	res, err := in.fns[exportABIVersion].Call(ctx)
	if err != nil {
		return 0, guestSaid(in.out, callError(ctx, err))
	}
	return api.DecodeI32(res[0]), nil
}

// describe calls runbox_describe and decodes the manifest.
func (in *instance) describe(ctx context.Context, maxOut int) (sdk.Manifest, error) {
	var m sdk.Manifest
	res, err := in.fns[exportDescribe].Call(ctx)
	if err != nil {
		return m, guestSaid(in.out, callError(ctx, err))
	}
	raw, err := in.readResult(res[0], maxOut)
	if err != nil {
		return m, err
	}
	if raw == nil {
		return m, fmt.Errorf("describe returned nothing: %w", ErrABI)
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return m, fmt.Errorf("decode manifest: %w", err)
	}
	return m, nil
}

// call sends input to export fn and returns the result payload (nil when
// the guest had nothing to say).
func (in *instance) call(ctx context.Context, fn string, input []byte, maxOut int) (json.RawMessage, error) {
	f := in.fns[fn]
	if f == nil {
		return nil, fmt.Errorf("missing export %s", fn)
	}
	in.out.Reset()
	res, err := in.alloc.Call(ctx, uint64(len(input)))
	if err != nil {
		return nil, fmt.Errorf("alloc: %w", guestSaid(in.out, callError(ctx, err)))
	}
	ptr := uint32(res[0])
	if ptr == 0 || !in.mod.Memory().Write(ptr, input) {
		return nil, fmt.Errorf("alloc returned %#x for %d bytes: %w", ptr, len(input), ErrABI)
	}
	res, err = f.Call(ctx, uint64(ptr), uint64(len(input)))
	if err != nil {
		return nil, guestSaid(in.out, callError(ctx, err))
	}
	return in.readResult(res[0], maxOut)
}

// readResult copies the packed ptr<<32|len answer out of guest memory and
// opens its envelope.
func (in *instance) readResult(packed uint64, maxOut int) (json.RawMessage, error) {
	if packed == 0 {
		return nil, nil
	}
	ptr, size := uint32(packed>>32), uint32(packed)
	if int64(size) > int64(maxOut) {
		return nil, fmt.Errorf("%d bytes, limit %d: %w", size, maxOut, ErrOutputTooLarge)
	}
	view, ok := in.mod.Memory().Read(ptr, size)
	if !ok {
		return nil, fmt.Errorf("result %#x+%d outside memory: %w", ptr, size, ErrABI)
	}
	var env sdk.Envelope
	if err := json.Unmarshal(view, &env); err != nil {
		return nil, fmt.Errorf("decode envelope: %w", err)
	}
	if env.Error != "" {
		return nil, fmt.Errorf("%w: %s", ErrGuest, env.Error)
	}
	if string(env.Result) == "null" {
		return nil, nil
	}
	return env.Result, nil
}

// callError turns wazero's errors into ours: a closed-on-deadline module
// becomes ErrTimeout.
func callError(ctx context.Context, err error) error {
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		switch exit.ExitCode() {
		case sys.ExitCodeDeadlineExceeded:
			return fmt.Errorf("%w: %w", ErrTimeout, err)
		case sys.ExitCodeContextCanceled:
			return fmt.Errorf("cancelled: %w", err)
		}
		return fmt.Errorf("guest exited with code %d: %w", exit.ExitCode(), err)
	}
	if ctx.Err() == context.DeadlineExceeded {
		return fmt.Errorf("%w: %w", ErrTimeout, err)
	}
	return err
}

// guestOutBytes bounds what an instance keeps of the guest's output for
// its errors (head and tail; the module's log keeps more).
const guestOutBytes = 4 << 10

// guestMessageMax bounds the guest's message quoted in an error.
const guestMessageMax = 200

// guestSaid puts the guest's own last message (a Go panic's "panic: ...",
// "fatal error: out of memory", an SDK error line) in front of err, which
// alone says only what wazero saw ("wasm error: unreachable" and a wasm
// stack): so that a user reading one line sees why it failed.
func guestSaid(out *tail.Buffer, err error) error {
	if msg := GuestMessage(out.String()); msg != "" {
		return fmt.Errorf("guest said %q: %w", msg, err)
	}
	return err
}

// GuestMessage picks, from what a guest wrote, the line that says why it
// failed: the first "panic: " or "fatal error: " line (a Go runtime's),
// else the last non-blank line; cut to one bounded line. "" when it wrote
// nothing.
func GuestMessage(out string) string {
	var last string
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "panic: ") || strings.HasPrefix(l, "fatal error: ") {
			last = l
			break
		}
		if l != "" && !strings.HasPrefix(l, "goroutine ") {
			last = l
		}
	}
	if len(last) > guestMessageMax {
		last = last[:guestMessageMax] + "..."
	}
	return last
}

// OneLine cuts s, an error's text, to its first line: what a table shows
// (wazero's errors go on with a wasm stack trace).
func OneLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[:i]) + " ..."
	}
	return s
}
