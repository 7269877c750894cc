package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/runbox/runbox/sdk"
)

// Plan asks every planner plugin about in, side by side, and merges the
// answers that came by ctx's end: risks and notes concatenated, frameworks
// unioned, and each recommendation field (with its reason), the smoke
// command, from the highest-priority plugin that set it. The errors are
// those of plugins that failed (already logged) or had not answered when
// ctx ended; the output is still usable.
func (h *Host) Plan(ctx context.Context, in sdk.PlanInput) (sdk.PlanOutput, []error) {
	var merged sdk.PlanOutput
	answers, errs := askEach[sdk.PlanOutput](ctx, h, sdk.KindPlanner, exportPlan, in)
	seen := map[string]bool{}
	for _, a := range answers {
		out := a.out
		merged.Risks = append(merged.Risks, out.Risks...)
		merged.Notes = append(merged.Notes, out.Notes...)
		for _, f := range out.Frameworks {
			if !seen[f] {
				seen[f] = true
				merged.Frameworks = append(merged.Frameworks, f)
			}
		}
		if merged.Smoke == nil && out.Smoke != nil {
			merged.Smoke = out.Smoke
		}
		// The hosts each planner found the command needs: all of them.
		for _, h := range out.AllowNet {
			if !seen["allow-net "+h.Host] {
				seen["allow-net "+h.Host] = true
				merged.AllowNet = append(merged.AllowNet, h)
			}
		}
		if out.Recommendation != nil {
			if merged.Recommendation == nil {
				merged.Recommendation = &sdk.Recommendation{}
			}
			fillRecommendation(merged.Recommendation, out.Recommendation)
		}
	}
	return merged, errs
}

// fillRecommendation copies into dst each field (and its reason) that dst
// does not have yet: plugins are visited highest priority first.
func fillRecommendation(dst, src *sdk.Recommendation) {
	if dst.Sandbox == "" && src.Sandbox != "" {
		dst.Sandbox, dst.SandboxReason = src.Sandbox, src.SandboxReason
	}
	if dst.Image == "" && src.Image != "" {
		dst.Image, dst.ImageReason = src.Image, src.ImageReason
	}
	if dst.TimeoutSeconds == 0 && src.TimeoutSeconds != 0 {
		dst.TimeoutSeconds, dst.TimeoutReason = src.TimeoutSeconds, src.TimeoutReason
	}
	if dst.MemoryBytes == 0 && src.MemoryBytes != 0 {
		dst.MemoryBytes, dst.MemoryReason = src.MemoryBytes, src.MemoryReason
	}
	if dst.Network == "" && src.Network != "" {
		dst.Network, dst.NetworkReason = src.Network, src.NetworkReason
	}
	if dst.GPUs == "" && src.GPUs != "" {
		dst.GPUs, dst.GPUsReason = src.GPUs, src.GPUsReason
	}
}

// Classify asks every classifier plugin, side by side, why a run failed
// and returns, of the answers that came by ctx's end, the one with the
// highest confidence (ties go to the higher priority), with Failure.Plugin
// filled in; nil when no plugin had an answer. A plugin that fails or
// gives an invalid answer (checkAnswer: an unknown code, a confidence
// outside 0..1) is logged, counted by its breaker and skipped; one that hangs holds up
// the others' answers no longer than its own call deadline.
func (h *Host) Classify(ctx context.Context, in sdk.ClassifyInput) *sdk.Failure {
	var best *sdk.Failure
	bestPrio := 0
	answers, _ := askEach[sdk.Failure](ctx, h, sdk.KindClassifier, exportClassify, in)
	for _, a := range answers {
		f := a.out // checked by invoke (checkAnswer)
		prio := a.m.manifest.Priority
		if best == nil || f.Confidence > best.Confidence || (f.Confidence == best.Confidence && prio > bestPrio) {
			f.Plugin, f.PluginVersion = a.m.manifest.Name, a.m.manifest.Version
			best, bestPrio = &f, prio
		}
	}
	// The rules files' signatures: a lab's own wording, asked beside the
	// plugins; the more confident answer wins, as between plugins.
	if r := classifyRules(h.rules(), in); r != nil && (best == nil || r.Confidence > best.Confidence) {
		best = r
	}
	return best
}

// Info describes one plugin for `runbox plugins ls/info`.
type Info struct {
	Name        string     `json:"name"`
	Version     string     `json:"version"`
	Kinds       []sdk.Kind `json:"kinds"`
	Description string     `json:"description,omitempty"`
	Frameworks  []string   `json:"frameworks,omitempty"`
	Priority    int        `json:"priority,omitempty"`
	Prefilter   []string   `json:"prefilter,omitempty"`
	// PrefilterConfirm are the manifest's checks around prefilter hits.
	PrefilterConfirm []sdk.PrefilterConfirm `json:"prefilter_confirm,omitempty"`
	Source           string                 `json:"source"` // file path, or "builtin:NAME"
	Builtin          bool                   `json:"builtin"`
	SHA256           string                 `json:"sha256"`
	Status           Status                 `json:"status"`
	// OffReason is the failure that made the circuit breaker switch the
	// plugin off, and RetryAt when it lets a call through to try it
	// again; both set only while Status is off.
	OffReason string     `json:"off_reason,omitempty"`
	RetryAt   *time.Time `json:"retry_at,omitempty"`
	LastError string     `json:"last_error,omitempty"`
	// OffReason and LastError are one line each (a table shows them);
	// Detail is the whole last error, wasm stack and all, for plugins
	// info.
	Detail   string `json:"detail,omitempty"`
	Calls    uint64 `json:"calls"`
	Failures uint64 `json:"failures"`
}

// Plugins describes every plugin found. It waits (bounded by ctx) for those
// still loading and loads the lazy ones, so names and kinds are known.
func (h *Host) Plugins(ctx context.Context) []Info {
	h.refresh()
	mods := h.mods()
	out := make([]Info, 0, len(mods))
	for _, m := range mods {
		loaded := m.wait(ctx)
		st := m.breaker.snapshot()
		i := Info{
			Source: m.source, Builtin: m.builtin, SHA256: m.sha(),
			Calls: st.calls, Failures: st.failures, Status: StatusReady,
		}
		if loaded {
			man := m.manifest
			i.Name, i.Version, i.Kinds, i.Description = man.Name, man.Version, man.Kinds, man.Description
			i.Frameworks, i.Priority, i.Prefilter = man.Frameworks, man.Priority, man.Prefilter
			i.PrefilterConfirm = man.PrefilterConfirm
		}
		clash := m.clash() // nil for a module not loaded
		switch {
		case !loaded && ctx.Err() != nil:
			i.Status = StatusPending
		case m.refused:
			i.Status = StatusRefused
		case !loaded:
			i.Status = StatusFailed
		case clash != nil:
			i.Status, st.lastErr = StatusFailed, clash
		case st.off:
			retry := st.retryAt
			i.Status, i.OffReason, i.RetryAt = StatusOff, OneLine(st.offReason), &retry
		}
		if st.lastErr != nil {
			d := st.lastErr.Error()
			if i.LastError = OneLine(d); d != i.LastError {
				i.Detail = d
			}
		}
		out = append(out, i)
	}
	return out
}

// Describe waits (bounded by ctx) for the plugin loaded from source (a
// Config.Files path, a file in a plugin dir, "builtin:NAME") and returns
// its manifest, or why it could not be loaded.
func (h *Host) Describe(ctx context.Context, source string) (sdk.Manifest, error) {
	m, err := h.bySource(ctx, source)
	if err != nil {
		return sdk.Manifest{}, err
	}
	return m.manifest, nil
}

// CallJSON sends input, a JSON document, to the kind's export of the plugin
// loaded from source and returns the result as the plugin wrote it (nil
// when it had nothing to say). It is for tools that hold their inputs as
// JSON (plugins test): the call is bounded like any other, but a failure
// is returned to the caller, not counted against the plugin.
func (h *Host) CallJSON(ctx context.Context, source string, kind sdk.Kind, input []byte) (json.RawMessage, error) {
	m, err := h.bySource(ctx, source)
	if err != nil {
		return nil, err
	}
	fn := exportFor(kind)
	if fn == "" || !m.manifest.Has(kind) {
		return nil, fmt.Errorf("plugin %s is no %s (kinds %v)", m.manifest.Name, kind, m.manifest.Kinds)
	}
	raw, err := h.invokeRaw(ctx, m, fn, json.RawMessage(input))
	if err != nil || raw == nil {
		return raw, err
	}
	// The checks a real run makes of the answer (invoke), so that a
	// fixture passes only what a run would keep.
	if kind != sdk.KindClassifier {
		return raw, nil
	}
	var f sdk.Failure
	if err := json.Unmarshal(raw, &f); err != nil {
		return raw, fmt.Errorf("decode %s result: %w", fn, err)
	}
	return raw, checkAnswer(&f)
}

// ErrInvalidAnswer is a plugin's answer that runbox throws away: an
// unknown failure code, a confidence outside 0..1.
var ErrInvalidAnswer = errors.New("plugin answer refused")

// checkAnswer is the check every plugin answer passes before runbox uses
// it, in a run (invoke) as in plugins test (CallJSON): one check, so
// that a fixture cannot pass what a run throws away. out is the decoded
// answer (a pointer).
func checkAnswer(out any) error {
	f, ok := out.(*sdk.Failure)
	if !ok {
		return nil
	}
	if !sdk.ValidCode(f.Code) {
		return fmt.Errorf("unknown failure code %q (see the codes in sdk/codes.go): %w", f.Code, ErrInvalidAnswer)
	}
	if math.IsNaN(f.Confidence) || f.Confidence < 0 || f.Confidence > 1 {
		return fmt.Errorf("confidence %v is outside 0..1: %w", f.Confidence, ErrInvalidAnswer)
	}
	return nil
}

// bySource returns the loaded module from source, waiting for it.
func (h *Host) bySource(ctx context.Context, source string) (*module, error) {
	for _, m := range h.mods() {
		if m.source != source {
			continue
		}
		if m.wait(ctx) {
			if err := m.clash(); err != nil {
				return nil, fmt.Errorf("load %s: %w", source, err)
			}
			return m, nil
		}
		select {
		case <-m.ready:
			return nil, fmt.Errorf("load %s: %w", source, m.loadErr)
		default:
			return nil, fmt.Errorf("load %s: %w", source, ctx.Err())
		}
	}
	return nil, fmt.Errorf("no plugin loaded from %s", source)
}

// ModuleNames loads each of modules (keyed as the caller likes) on its
// own host, as cfg says (its Builtins, Dirs and Files are not used), and
// returns the name each one's manifest gives, keyed alike; a module that
// does not load is left out (it would not load from a bundle either). It
// is what install asks (bundle.Policy.Names) to refuse a bundle whose
// plugins are named like another installed bundle's: the bundle package
// cannot load modules itself.
func ModuleNames(ctx context.Context, cfg Config, modules map[string][]byte) (map[string]string, error) {
	cfg.Dirs, cfg.Files, cfg.Builtins, cfg.StateFile, cfg.RequireSigned = nil, nil, nil, "", nil
	for k, b := range modules {
		// Loaded as built-ins of unknown kind: at once, from memory, and
		// no name refused (only its name is asked).
		cfg.Builtins = append(cfg.Builtins, Builtin{Name: k, Wasm: b})
	}
	h, err := NewHost(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer h.Close(context.Background())
	out := make(map[string]string, len(modules))
	for k := range modules {
		if man, err := h.Describe(ctx, "builtin:"+k); err == nil {
			out[k] = man.Name
		}
	}
	return out, ctx.Err()
}
