package host

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/internal/printable"
	"github.com/runbox/runbox/store"
)

// placeholder is {NAME} in a sweep's command; ${NAME} is the shell's and
// is left alone (placeholders).
var placeholder = regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// paramName is what a param may be called: a name {NAME} can stand for
// and RUNBOX_PARAM_NAME can carry.
var paramName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// quoting is where a placeholder sits in a shell command line.
type quoting int

const (
	bare     quoting = iota // outside quotes
	inSingle                // inside '...'
	inDouble                // inside "..."
)

// placeholders calls fn for each {NAME} in arg that is not ${NAME}, and
// returns arg with each replaced by what fn returns.
func placeholders(arg string, fn func(name string) string) string {
	out, _ := substitute(arg, false, bare, fn)
	return out
}

// substitute is placeholders for an argument of a command line: for a
// shell's (shell), fn's value is quoted for where the placeholder sits,
// so the shell reads it back as the value itself (shellQuote). q is the
// quoting arg starts in (a shell command's arguments are joined with
// spaces: a quote may span them); end is the quoting it leaves.
func substitute(arg string, shell bool, q quoting, fn func(name string) string) (out string, end quoting) {
	var b strings.Builder
	last, scanned := 0, 0
	for _, m := range placeholder.FindAllStringSubmatchIndex(arg, -1) {
		if m[0] > 0 && arg[m[0]-1] == '$' {
			continue
		}
		b.WriteString(arg[last:m[0]])
		v := fn(arg[m[2]:m[3]])
		if shell {
			q = scanQuoting(arg, scanned, m[0], q)
			scanned = m[1]
			v = shellQuote(v, q)
		}
		b.WriteString(v)
		last = m[1]
	}
	b.WriteString(arg[last:])
	if shell {
		q = scanQuoting(arg, scanned, len(arg), q)
	}
	return b.String(), q
}

// scanQuoting is the quoting in effect at s[to], given q at s[from].
func scanQuoting(s string, from, to int, q quoting) quoting {
	for i := from; i < to; i++ {
		switch c := s[i]; {
		case q == inSingle:
			if c == '\'' {
				q = bare
			}
		case c == '\\':
			i++ // the next character is escaped
		case q == inDouble:
			if c == '"' {
				q = bare
			}
		case c == '\'':
			q = inSingle
		case c == '"':
			q = inDouble
		}
	}
	return q
}

// shellQuote is v written so that a shell, reading it where q says,
// takes it as exactly v: outside quotes one single-quoted word (a pair of
// quotes when empty), inside single quotes with each quote in v closed,
// escaped and reopened, inside "..." with \ $ ` and " escaped. Nothing
// in v is expanded or run.
func shellQuote(v string, q quoting) string {
	switch q {
	case inSingle:
		return strings.ReplaceAll(v, "'", `'\''`)
	case inDouble:
		var b strings.Builder
		for _, r := range v {
			if r == '\\' || r == '$' || r == '`' || r == '"' {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		}
		return b.String()
	}
	return "'" + shellQuote(v, inSingle) + "'"
}

// shellUnquote is the inverse of shellQuote: the value a shell reads from
// s written where q says (for a retried member's command, retriedParams).
func shellUnquote(s string, q quoting) string {
	switch q {
	case inSingle:
		return strings.ReplaceAll(s, `'\''`, "'")
	case inDouble:
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\\$`\"", s[i+1]) >= 0 {
				i++
			}
			b.WriteByte(s[i])
		}
		return b.String()
	}
	var b strings.Builder
	for i, q := 0, bare; i < len(s); i++ {
		c := s[i]
		switch {
		case q == inSingle:
			if c == '\'' {
				q = bare
			} else {
				b.WriteByte(c)
			}
		case q == inDouble && c == '"':
			q = bare
		case c == '\\' && i+1 < len(s) && (q == bare || strings.IndexByte("\\$`\"", s[i+1]) >= 0):
			i++
			b.WriteByte(s[i])
		case q == bare && c == '\'':
			q = inSingle
		case q == bare && c == '"':
			q = inDouble
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// paramEnv is the environment variable a member gets for param name.
func paramEnv(name string) string {
	var b strings.Builder
	b.WriteString("RUNBOX_PARAM_")
	for _, r := range strings.ToUpper(name) {
		if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// templated are the parts of a sweep's run request where {NAME} stands
// for a member's value (memberRequest): the command, env values, setup
// commands, label values. Each is named as the user would know it.
func templated(req api.RunRequest) (where []string, texts []string) {
	for _, a := range req.Command {
		where, texts = append(where, "the command"), append(texts, a)
	}
	for _, kv := range req.Env {
		k, v, _ := strings.Cut(kv, "=")
		where, texts = append(where, "-e "+k), append(texts, v)
	}
	for _, c := range req.Setup {
		where, texts = append(where, "--setup"), append(texts, c)
	}
	for _, k := range slices.Sorted(maps.Keys(req.Labels)) {
		where, texts = append(where, "--label "+k), append(texts, req.Labels[k])
	}
	return where, texts
}

// checkSweep refuses a sweep that cannot mean what it says.
func checkSweep(req api.SweepRequest) error {
	if len(req.Run.Command) == 0 {
		return badRequest("no command given")
	}
	if len(req.ParamNames) == 0 {
		return badRequest("a sweep needs at least one --param NAME=V1,V2 or a --params-file")
	}
	if len(req.Sets) == 0 {
		return badRequest("the sweep has no parameter sets")
	}
	if len(req.Sets) > api.MaxSweepMembers && !req.Yes {
		return badRequest("the sweep has %d members, more than %d: pass --yes if you mean it", len(req.Sets), api.MaxSweepMembers)
	}
	if req.Parallel < 0 || req.MaxFailures < 0 {
		return badRequest("--parallel and --max-failures cannot be negative")
	}
	if req.Run.PlanID != "" || req.Run.Attach {
		return badRequest("a sweep's members are ordinary runs: no --plan or attached sweep")
	}
	envs := map[string]string{}
	for _, n := range req.ParamNames {
		if !paramName.MatchString(n) {
			return badRequest("param name %q cannot be used: {NAME} and $RUNBOX_PARAM_NAME take letters, digits and _ only, not starting with a digit (rename it, e.g. %s)", n, suggestName(n))
		}
		env := paramEnv(n)
		if other, ok := envs[env]; ok {
			return badRequest("params %s and %s would both be $%s (names differ only in case): rename one", other, n, env)
		}
		envs[env] = n
	}
	where, texts := templated(req.Run)
	for i, text := range texts {
		var unknown string
		placeholders(text, func(name string) string {
			if unknown == "" && !slices.Contains(req.ParamNames, name) {
				unknown = name
			}
			return ""
		})
		if unknown != "" {
			return badRequest("%s uses {%s} but no param is called %s (params: %s)", where[i], unknown, unknown, strings.Join(req.ParamNames, ", "))
		}
	}
	for i, set := range req.Sets {
		for _, n := range req.ParamNames {
			if _, ok := set[n]; !ok {
				return badRequest("parameter set %d has no value for %s", i+1, n)
			}
		}
		if len(set) != len(req.ParamNames) {
			return badRequest("parameter set %d has params the sweep does not name", i+1)
		}
	}
	return nil
}

// suggestName is n with what a param name cannot have made _.
func suggestName(n string) string {
	var b strings.Builder
	for i, r := range n {
		switch {
		case r == '_' || (r >= 'A' && r <= 'Z') || (r >= 'a' && r <= 'z'):
		case r >= '0' && r <= '9':
			if i == 0 {
				b.WriteByte('_')
			}
		default:
			r = '_'
		}
		b.WriteRune(r)
	}
	if b.Len() == 0 {
		return "p"
	}
	return b.String()
}

// memberRequest is the template with set's values in place: in the
// command (quoted for the shell with --shell), env values, setup commands
// (shell command lines: quoted) and label values.
func memberRequest(sw *store.Sweep, tmpl api.RunRequest, i int) api.RunRequest {
	set := sw.Sets[i]
	value := func(name string) string { return set[name] }
	req := tmpl
	req.Command = make([]string, len(tmpl.Command))
	q := bare
	for j, arg := range tmpl.Command {
		req.Command[j], q = substitute(arg, tmpl.Shell, q, value)
	}
	req.Env = make([]string, 0, len(tmpl.Env)+len(sw.ParamNames))
	for _, kv := range tmpl.Env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			kv = k + "=" + placeholders(v, value)
		}
		req.Env = append(req.Env, kv)
	}
	for _, n := range sw.ParamNames {
		req.Env = append(req.Env, paramEnv(n)+"="+set[n])
	}
	if tmpl.Setup != nil {
		req.Setup = make([]string, len(tmpl.Setup))
		for j, c := range tmpl.Setup {
			req.Setup[j], _ = substitute(c, true, bare, value)
		}
	}
	if tmpl.Labels != nil {
		req.Labels = make(map[string]string, len(tmpl.Labels))
		for k, v := range tmpl.Labels {
			req.Labels[k] = placeholders(v, value)
		}
	}
	name := sw.Name
	if name == "" {
		name = "sweep"
	}
	req.Name = fmt.Sprintf("%s[%d]", name, i)
	// Sent again after a daemon restart, a member finds the run it
	// created: none runs twice, none is lost.
	req.IdempotencyKey = "sweep/" + sw.ID + "/" + strconv.Itoa(i)
	return req
}

// SubmitSweep creates a sweep and queues one run per parameter set.
func (e *Engine) SubmitSweep(ctx context.Context, req api.SweepRequest) (*store.Sweep, error) {
	if err := checkSweep(req); err != nil {
		return nil, err
	}
	if req.IdempotencyKey != "" {
		if sw, err := e.resentSweep(ctx, req.IdempotencyKey); err != nil || sw != nil {
			return sw, err
		}
	}
	sw := &store.Sweep{
		SubmitKey: req.IdempotencyKey,
		ID:        store.NewID(), Name: req.Name, Command: req.Run.Command, ParamNames: req.ParamNames,
		Sets: req.Sets, Parallel: req.Parallel, MaxFailures: req.MaxFailures, CreatedAt: e.cfg.Now(),
	}
	tmpl := req.Run
	tmpl.IdempotencyKey = ""
	// The template waits in the sweep's own directory with its real
	// environment (0600, like a queued run's spec) until every member is
	// created, so a restarted daemon can create the rest.
	if err := saveTemplate(e.sweepDir(sw.ID), tmpl); err != nil {
		return nil, err
	}
	if err := e.cfg.Store.PutSweep(ctx, sw); err != nil {
		return nil, err
	}
	ctx = context.WithoutCancel(ctx) // a client gone mid-way does not leave half a sweep
	// One copy of the workspace for every member (sweepsnap.go), before
	// the first is created: a restarted daemon's members find it.
	err := e.takeSweepSnapshot(ctx, sw.ID, tmpl)
	if err == nil {
		_, err = e.submitMember(ctx, sw, tmpl, 0)
	}
	if err != nil {
		_ = e.cfg.Store.DeleteSweep(ctx, sw.ID)
		e.removeSweepSnapshot(sw.ID)
		removeTemplate(e.sweepDir(sw.ID))
		return nil, err
	}
	if err := e.submitMembers(ctx, sw, tmpl, 1); err != nil {
		return sw, err
	}
	return sw, nil
}

func (e *Engine) submitMember(ctx context.Context, sw *store.Sweep, tmpl api.RunRequest, i int) (*store.Run, error) {
	return e.submit(ctx, memberRequest(sw, tmpl, i), nil, &store.Campaign{Sweep: sw.ID, Index: i, Params: sw.Sets[i]})
}

// submitMembers creates members from..end and marks the sweep complete.
func (e *Engine) submitMembers(ctx context.Context, sw *store.Sweep, tmpl api.RunRequest, from int) error {
	for i := from; i < len(sw.Sets); i++ {
		if _, err := e.submitMember(ctx, sw, tmpl, i); err != nil {
			return fmt.Errorf("sweep %s member %d: %w", sw.ID, i, err)
		}
	}
	if _, err := e.cfg.Store.UpdateSweep(ctx, sw.ID, func(s *store.Sweep) error {
		s.Complete = true
		return nil
	}); err != nil {
		return err
	}
	e.mu.Lock()
	if st := e.camp.sweeps[sw.ID]; st != nil {
		st.complete = true
	}
	e.mu.Unlock()
	e.schedule() // its Slurm members start, as one job array
	removeTemplate(e.sweepDir(sw.ID))
	go e.releaseSweepSnapshot(sw.ID) // its members may all have ended already
	return nil
}

// resentSweep finds the sweep a request with this key made and, if its
// members are not all created yet, creates the rest (as RecoverSweeps
// may be doing at the same moment: each member's own key keeps either
// from making it twice).
func (e *Engine) resentSweep(ctx context.Context, key string) (*store.Sweep, error) {
	sweeps, err := e.cfg.Store.ListSweeps(ctx)
	if err != nil {
		return nil, err
	}
	for _, sw := range sweeps {
		if sw.SubmitKey != key {
			continue
		}
		if !sw.Complete {
			tmpl, err := loadTemplate(e.sweepDir(sw.ID))
			if errors.Is(err, os.ErrNotExist) {
				// RecoverSweeps finished it meanwhile.
				return e.cfg.Store.GetSweep(ctx, sw.ID)
			} else if err != nil {
				return nil, fmt.Errorf("sweep %s: its template: %w", sw.ID, err)
			}
			if err := e.submitMembers(context.WithoutCancel(ctx), sw, tmpl, 0); err != nil {
				return nil, err
			}
		}
		return sw, nil
	}
	return nil, nil
}

// RecoverSweeps creates the members a previous daemon did not get to
// (their ids come from their submit keys, so none is made twice).
func (e *Engine) RecoverSweeps(ctx context.Context) {
	sweeps, err := e.cfg.Store.ListSweeps(ctx)
	if err != nil {
		e.log.Error("recover: sweeps", "err", err)
		return
	}
	for _, sw := range sweeps {
		if sw.Complete {
			// A daemon killed as its last member ended may have left
			// the sweep's copy of the workspace.
			e.releaseSweepSnapshot(sw.ID)
			continue
		}
		tmpl, err := loadTemplate(e.sweepDir(sw.ID))
		if err != nil {
			e.log.Error("recover: sweep template", "sweep", sw.ID, "err", err)
			continue
		}
		e.log.Info("recover: creating the rest of a sweep", "sweep", sw.ID)
		if err := e.submitMembers(ctx, sw, tmpl, 0); err != nil {
			e.log.Error("recover: sweep", "sweep", sw.ID, "err", err)
		}
	}
}

// memberAttempts groups a sweep's runs by member index, each member's
// attempts oldest first: a retry of a member joins its sweep as the
// member's next attempt (retryMember).
func memberAttempts(runs []*store.Run) map[int][]*store.Run {
	out := map[int][]*store.Run{}
	for _, r := range runs {
		idx := 0
		if r.Campaign != nil {
			idx = r.Campaign.Index
		}
		out[idx] = append(out[idx], r)
	}
	for _, att := range out {
		sort.SliceStable(att, func(i, j int) bool {
			if !att[i].CreatedAt.Equal(att[j].CreatedAt) {
				return att[i].CreatedAt.Before(att[j].CreatedAt)
			}
			return att[i].ID < att[j].ID
		})
	}
	return out
}

// memberFailed reports whether a member's attempt ended in a way that
// --max-failures counts.
func memberFailed(s store.State) bool {
	return s.Terminal() && s != store.Succeeded && s != store.Cancelled
}

// retryMember retries a sweep member as the member's next attempt: the
// new run joins the sweep with the member's index and params, so the
// sweep's table shows it in the member's row (the earlier attempts as
// its previous ones), sweep wait and stop reach it, and the sweep's
// --parallel holds it (on Slurm: it goes as an array of the sweep, held
// by the cluster until the sweep's live arrays end, backendheld.go). A
// retry reopens a stopped sweep: the user asked for this run after the
// stop; the members the stop cancelled stay cancelled until retried
// themselves (docs/RATIONALE.md, campaigns).
func (e *Engine) retryMember(ctx context.Context, parent *store.Run, req api.RunRequest) (*store.Run, error) {
	c := parent.Campaign
	sw, err := e.cfg.Store.GetSweep(ctx, c.Sweep)
	if store.IsNotFound(err) {
		return e.submit(ctx, req, parent, nil) // its sweep is gone: a run of its own
	} else if err != nil {
		return nil, err
	}
	// A member has one live attempt at a time: two would both claim its
	// row, and the --parallel count would see the member twice.
	e.camp.retry.Lock()
	defer e.camp.retry.Unlock()
	if req.IdempotencyKey != "" {
		// The same retry sent again (its answer was lost) gets the run
		// it made, rather than being refused as a second live attempt.
		if run, err := e.cfg.Store.SubmittedRun(ctx, req.IdempotencyKey); err == nil {
			return e.Get(ctx, run.ID)
		} else if !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
	}
	runs, err := e.cfg.Store.ListRuns(ctx, store.Filter{Sweep: sw.ID})
	if err != nil {
		return nil, err
	}
	att := memberAttempts(runs)[c.Index]
	for _, r := range att {
		if r = e.withUnrecorded(r); !r.State.Terminal() {
			return nil, badRequest("member %d of sweep %s is still being run by %s (%s); stop it or wait before retrying", c.Index, sw.ID, r.ID, r.State)
		}
	}
	if sw.Stopped != "" {
		if _, err := e.cfg.Store.UpdateSweep(ctx, sw.ID, func(s *store.Sweep) error {
			s.Stopped = ""
			return nil
		}); err != nil {
			return nil, err
		}
	}
	e.mu.Lock()
	if st := e.sweepStateLocked(sw.ID); st != nil {
		st.stopped = ""
		delete(st.failed, c.Index)
		if st.replaced == nil {
			st.replaced = map[string]bool{}
		}
		for _, r := range att {
			st.replaced[r.ID] = true
		}
	}
	e.mu.Unlock()
	params := c.Params
	if len(req.Command) > 0 || len(req.Env) > 0 {
		// A retry that changes the command or a param's env var runs
		// other values: its row shows those (retriedParams), and the run
		// sees them in its RUNBOX_PARAM_ vars.
		var env []string
		params, env = retriedParams(sw, parent, req)
		req.Env = append(env, req.Env...)
	}
	run, err := e.submit(ctx, req, parent, &store.Campaign{Sweep: sw.ID, Index: c.Index, Params: params})
	if err != nil {
		// Refused or not created: the sweep's state is read again from
		// the store (a refused retry is on record as a failed attempt).
		e.mu.Lock()
		delete(e.camp.sweeps, sw.ID)
		e.mu.Unlock()
		return nil, err
	}
	return run, nil
}

// RetryChangedParam is the value a retried member's row shows for a
// param the retry's command no longer says (it does not fit the sweep's
// command): never the member's old value beside the new run's result.
const RetryChangedParam = "? (the retry changed the command)"

// retriedParams are the params a retry of a member runs with: read from
// its command where that differs from the member's (its values where the
// sweep's command has {NAME}; RetryChangedParam for a param the command
// holds no longer), then from RUNBOX_PARAM_ vars in its env, which win.
// env are the RUNBOX_PARAM_ vars to give the run for the values that
// changed.
func retriedParams(sw *store.Sweep, parent *store.Run, req api.RunRequest) (params map[string]string, env []string) {
	old := parent.Campaign.Params
	params = maps.Clone(old)
	if params == nil {
		params = map[string]string{}
	}
	shell := parent.Spec.Shell || req.Shell
	if len(req.Command) > 0 && !slices.Equal(req.Command, parent.Spec.Command) {
		got, ok := commandParams(sw.Command, req.Command, shell)
		for _, n := range sw.ParamNames {
			if !usesParam(sw.Command, n) {
				continue // only in its env var: the command says nothing of it
			}
			switch v, has := got[n]; {
			case ok && has:
				params[n] = v
			default:
				params[n] = RetryChangedParam
			}
		}
	}
	for _, kv := range req.Env {
		k, v, _ := strings.Cut(kv, "=")
		for _, n := range sw.ParamNames {
			if k == paramEnv(n) {
				params[n] = v
			}
		}
	}
	for _, n := range sw.ParamNames {
		if v := params[n]; v != old[n] && v != RetryChangedParam {
			env = append(env, paramEnv(n)+"="+v)
		}
	}
	return params, env
}

// usesParam reports whether the sweep's command has {name}.
func usesParam(cmd []string, name string) bool {
	found := false
	for _, a := range cmd {
		placeholders(a, func(n string) string {
			found = found || n == name
			return ""
		})
	}
	return found
}

// commandParams reads the values of tmpl's placeholders from cmd, a
// command made from it: ok is false when cmd does not fit tmpl (another
// number of arguments, other fixed text, one param with two values).
func commandParams(tmpl, cmd []string, shell bool) (map[string]string, bool) {
	if len(tmpl) != len(cmd) {
		return nil, false
	}
	got := map[string]string{}
	q := bare
	for i, arg := range tmpl {
		var pat strings.Builder
		var names []string
		var quotes []quoting
		last, scanned := 0, 0
		for _, m := range placeholder.FindAllStringSubmatchIndex(arg, -1) {
			if m[0] > 0 && arg[m[0]-1] == '$' {
				continue
			}
			if shell {
				q = scanQuoting(arg, scanned, m[0], q)
				scanned = m[1]
			}
			pat.WriteString(regexp.QuoteMeta(arg[last:m[0]]))
			pat.WriteString(`(.*?)`)
			names, quotes = append(names, arg[m[2]:m[3]]), append(quotes, q)
			last = m[1]
		}
		if shell {
			q = scanQuoting(arg, scanned, len(arg), q)
		}
		if names == nil {
			if arg != cmd[i] {
				return nil, false
			}
			continue
		}
		pat.WriteString(regexp.QuoteMeta(arg[last:]))
		re, err := regexp.Compile(`^(?s:` + pat.String() + `)$`)
		if err != nil {
			return nil, false
		}
		m := re.FindStringSubmatch(cmd[i])
		if m == nil {
			return nil, false
		}
		for j, n := range names {
			v := m[j+1]
			if shell {
				v = shellUnquote(v, quotes[j])
			}
			if prev, seen := got[n]; seen && prev != v {
				return nil, false
			}
			got[n] = v
		}
	}
	return got, true
}

// SweepStatus is a sweep with one row per member, sorted by metric when
// sortBy names one (best first).
func (e *Engine) SweepStatus(ctx context.Context, id, sortBy string) (*api.Sweep, error) {
	sw, err := e.cfg.Store.GetSweep(ctx, id)
	if err != nil {
		return nil, err
	}
	runs, err := e.List(ctx, store.Filter{Sweep: sw.ID})
	if err != nil {
		return nil, err
	}
	v := sweepView(sw)
	members := memberAttempts(runs)
	ended := 0
	for _, att := range members {
		r := att[len(att)-1] // the member's row is its latest attempt
		v.Counts[api.State(r.State)]++
		if r.State.Terminal() {
			ended++
		}
		row := e.memberRow(ctx, r)
		row.Attempt = len(att)
		for _, p := range att[:len(att)-1] {
			row.Previous = append(row.Previous, p.ID)
		}
		v.Runs = append(v.Runs, row)
	}
	v.Done = sw.Complete && len(members) == len(sw.Sets) && ended == len(members)
	sort.Slice(v.Runs, func(i, j int) bool { return v.Runs[i].Index < v.Runs[j].Index })
	if sortBy != "" {
		if err := checkMemberSort(v.Runs, sortBy, v.Done); err != nil {
			return nil, err
		}
		sortMembers(v.Runs, sortBy)
	}
	return v, nil
}

// checkMemberSort refuses sorting members by a metric none of them has
// (they were left in member order, said to be sorted). While no member
// has reported any metric and the sweep goes on, any name is taken:
// nothing is known yet.
func checkMemberSort(rows []api.SweepRun, name string, done bool) error {
	have := map[string]bool{}
	for _, r := range rows {
		for m := range r.Metrics {
			have[m] = true
		}
	}
	if have[name] || (len(have) == 0 && !done) {
		return nil
	}
	if len(have) == 0 {
		return badRequest("--sort %s: the sweep's members reported no metrics to sort by", name)
	}
	return badRequest("--sort %s: no member has a metric called %s (their metrics: %s)", name, name, strings.Join(slices.Sorted(maps.Keys(have)), ", "))
}

func sweepView(sw *store.Sweep) *api.Sweep {
	return &api.Sweep{
		ID: sw.ID, Name: sw.Name, Command: sw.Command, CommandLine: printable.Command(sw.Command), ParamNames: sw.ParamNames, Parallel: sw.Parallel,
		MaxFailures: sw.MaxFailures, CreatedAt: sw.CreatedAt, Stopped: sw.Stopped, Members: len(sw.Sets),
		Counts: map[api.State]int{},
	}
}

func (e *Engine) memberRow(ctx context.Context, r *store.Run) api.SweepRun {
	row := api.SweepRun{ID: r.ID, ShortID: r.Short, State: api.State(r.State), Reason: r.Reason, Started: r.StartedAt, Ended: r.EndedAt}
	if r.Campaign != nil {
		row.Index, row.Params = r.Campaign.Index, r.Campaign.Params
	}
	if p := r.Progress; p != nil && p.Percentage > 0 {
		pct := p.Percentage
		row.Progress = &pct
	}
	if r.Failure != nil && r.State != store.Succeeded {
		row.Failure = r.Failure.Code
	}
	if _, h, err := e.Metrics(ctx, r.ID); err == nil && h != nil {
		for _, s := range h.Series {
			if len(s.Points) == 0 {
				continue
			}
			// A member whose loss went NaN keeps its row: it is the one a
			// sweep is looked at for (it was left out, JSON having no NaN).
			lower := lowerIsBetter(s.Name)
			best := math.NaN()
			for _, p := range s.Points {
				b := p.Max
				if lower {
					b = p.Min
				}
				if !math.IsNaN(b) && !math.IsInf(b, 0) && (math.IsNaN(best) || better(b, best, lower)) {
					best = b
				}
			}
			m := api.Metric{Last: api.Float(s.Points[len(s.Points)-1].Value), Best: api.Float(best)}
			if row.Metrics == nil {
				row.Metrics = map[string]api.Metric{}
			}
			row.Metrics[s.Name] = m
		}
	}
	return row
}

// lowerIsBetter guesses a metric's direction from its name: losses and
// errors fall, accuracies and scores rise.
func lowerIsBetter(name string) bool {
	n := strings.ToLower(name)
	for _, w := range []string{"loss", "err", "perplexity", "ppl", "mse", "mae", "rmse", "wer", "cer", "time", "latency"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// sortMembers orders rows best first by metric name; rows without it go
// last, in member order.
func sortMembers(rows []api.SweepRun, name string) {
	lower := lowerIsBetter(name)
	sort.SliceStable(rows, func(i, j int) bool {
		a, aok := rows[i].Metrics[name]
		b, bok := rows[j].Metrics[name]
		switch {
		case aok != bok:
			return aok
		case !aok:
			return false
		}
		x, y := float64(a.Best), float64(b.Best)
		if math.IsNaN(x) || math.IsNaN(y) {
			return !math.IsNaN(x) && math.IsNaN(y) // no finite best: last
		}
		return better(x, y, lower)
	})
}

// better reports whether x is a better value than y of a metric.
func better(x, y float64, lower bool) bool {
	if lower {
		return x < y
	}
	return x > y
}

// ListSweeps lists sweeps, newest first, with their members' counts.
func (e *Engine) ListSweeps(ctx context.Context) ([]api.Sweep, error) {
	sweeps, err := e.cfg.Store.ListSweeps(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]api.Sweep, 0, len(sweeps))
	for _, sw := range sweeps {
		v := sweepView(sw)
		runs, err := e.List(ctx, store.Filter{Sweep: sw.ID})
		if err != nil {
			return nil, err
		}
		ended := 0
		for _, att := range memberAttempts(runs) {
			r := att[len(att)-1]
			v.Counts[api.State(r.State)]++
			if r.State.Terminal() {
				ended++
			}
		}
		v.Done = sw.Complete && ended == len(sw.Sets)
		out = append(out, *v)
	}
	return out, nil
}

// StopSweep cancels a sweep's members not yet started and stops those
// running.
func (e *Engine) StopSweep(ctx context.Context, id string) (*api.Sweep, error) {
	sw, err := e.cfg.Store.GetSweep(ctx, id)
	if err != nil {
		return nil, err
	}
	const why = "sweep stopped by the user"
	e.mu.Lock()
	if st := e.sweepStateLocked(sw.ID); st != nil && st.stopped == "" {
		st.stopped = why
	}
	e.mu.Unlock()
	e.persistStop(&sweepStop{id: sw.ID, reason: why})
	e.schedule() // cancels the queued members
	runs, err := e.List(ctx, store.Filter{Sweep: sw.ID})
	if err != nil {
		return nil, err
	}
	e.stopGroups(ctx, runs) // a sweep's groups, each at once (backendheld.go)
	for _, r := range runs {
		if !r.State.Terminal() {
			if _, err := e.Stop(ctx, r.ID, 0); err != nil {
				e.log.Warn("sweep stop", "run", r.ID, "err", err)
			}
		}
	}
	return e.SweepStatus(ctx, sw.ID, "")
}

// WaitSweep blocks until every member has ended (or ctx ends).
func (e *Engine) WaitSweep(ctx context.Context, id string) (*api.Sweep, error) {
	sw, err := e.cfg.Store.GetSweep(ctx, id)
	if err != nil {
		return nil, err
	}
	for {
		runs, err := e.List(ctx, store.Filter{Sweep: sw.ID})
		if err != nil {
			return nil, err
		}
		var live string
		for _, r := range runs {
			if !r.State.Terminal() {
				live = r.ID
				break
			}
		}
		if live == "" {
			if cur, err := e.cfg.Store.GetSweep(ctx, sw.ID); err == nil && cur.Complete {
				break
			}
		}
		if live != "" {
			if _, err := e.Wait(ctx, live); err != nil {
				return nil, err
			}
		} else {
			// Every member so far has ended but some are still being
			// created (a restarted daemon finishing the sweep).
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
		if ctx.Err() != nil {
			break
		}
	}
	return e.SweepStatus(context.WithoutCancel(ctx), sw.ID, "")
}
