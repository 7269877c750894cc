package store

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sdk"
)

func TestRunCRUDAndPrefix(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	ids := []string{"abc111", "abc222", "abd333", "xyz"}
	for _, id := range ids {
		r := &Run{ID: id, Sandbox: "process", Spec: sandbox.Spec{Command: []string{"echo", id}}}
		if err := s.CreateRun(ctx, r); err != nil {
			t.Fatalf("create %s: %v", id, err)
		}
		if r.State != Queued || r.Attempt != 1 || r.CreatedAt.IsZero() || r.Spec.RunID != id {
			t.Fatalf("defaults not filled in: %+v", r)
		}
	}
	if err := s.CreateRun(ctx, &Run{ID: "xyz"}); !errors.Is(err, ErrExists) {
		t.Fatalf("duplicate create: got %v, want ErrExists", err)
	}
	tests := []struct {
		query, want string
		err         error
	}{
		{"abc111", "abc111", nil},
		{"ABC1", "abc111", nil},
		{"abd", "abd333", nil},
		{"x", "xyz", nil},
		{"xyz", "xyz", nil},
		{"ab", "", ErrAmbiguous},
		{"abc", "", ErrAmbiguous},
		{"nope", "", ErrNotFound},
		{"", "", ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			r, err := s.GetRun(ctx, tt.query)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("got %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil || r.ID != tt.want {
				t.Fatalf("got %v, %v; want %s", r, err, tt.want)
			}
		})
	}
	_, err := s.GetRun(ctx, "abc")
	var amb *AmbiguousError
	if !errors.As(err, &amb) || len(amb.Candidates) != 2 || !strings.Contains(err.Error(), "abc111, abc222") {
		t.Fatalf("ambiguous error should list candidates: %v", err)
	}
	if _, err := s.GetRun(ctx, "abc9"); err == nil || err.Error() != `run "abc9" not found` {
		t.Fatalf("not-found message: %v", err)
	}
	if got := NewID(); len(got) != 26 || strings.ToLower(got) != got {
		t.Fatalf("NewID = %q, want 26 lowercase chars", got)
	}
	if a, b := NewID(), NewID(); a >= b {
		t.Fatalf("ids not increasing: %s then %s", a, b)
	}
}

func TestPlans(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	p := &Plan{Command: []string{"python", "train.py"}, Sandbox: "docker",
		Spec:   sandbox.Spec{Env: []string{"HF_TOKEN=hf_abc", "EPOCHS=3"}},
		Result: sdk.PlanOutput{Frameworks: []string{"pytorch"}}}
	if err := s.PutPlan(ctx, p); err != nil {
		t.Fatal(err)
	}
	if p.ID == "" || p.Spec.Env[0] != "HF_TOKEN=hf_abc" {
		t.Fatalf("caller's plan changed wrongly: %+v", p)
	}
	got, err := s.GetPlan(ctx, p.ID[:20])
	if err != nil {
		t.Fatal(err)
	}
	if got.Sandbox != "docker" || got.Result.Frameworks[0] != "pytorch" {
		t.Fatalf("round trip: %+v", got)
	}
	if want := []string{"HF_TOKEN=<redacted>", "EPOCHS=3"}; strings.Join(got.Spec.Env, " ") != strings.Join(want, " ") {
		t.Fatalf("stored env = %v, want %v", got.Spec.Env, want)
	}
	if _, err := s.GetPlan(ctx, "zzz"); !errors.Is(err, ErrNotFound) || err.Error() != `plan "zzz" not found` {
		t.Fatalf("missing plan: %v", err)
	}
}

func TestTransitions(t *testing.T) {
	tests := []struct {
		path []State
		to   State
		ok   bool
	}{
		{nil, Preparing, true},
		{nil, Running, true},
		{nil, Cancelled, true},
		{[]State{Preparing, Smoke}, Running, true},
		{[]State{Running}, Succeeded, true},
		{[]State{Running}, Lost, true},
		{[]State{Running}, Queued, false},
		{[]State{Running}, Running, false},
		{[]State{Succeeded}, Running, false},
		{[]State{Failed}, Succeeded, false},
		{[]State{Cancelled}, Queued, false},
		{nil, "bogus", false},
	}
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	for _, tt := range tests {
		name := strings.Trim(strings.Join(append([]string{"queued"}, statesToStrings(tt.path)...), ">")+">"+string(tt.to), ">")
		t.Run(name, func(t *testing.T) {
			r := &Run{}
			if err := s.CreateRun(ctx, r); err != nil {
				t.Fatal(err)
			}
			for _, st := range tt.path {
				if _, err := s.Transition(ctx, r.ID, st, "step", nil); err != nil {
					t.Fatalf("setup %s: %v", st, err)
				}
			}
			got, err := s.Transition(ctx, r.ID, tt.to, "why", func(r *Run) { r.Ref = "pid:1" })
			if !tt.ok {
				if !errors.Is(err, ErrInvalidTransition) {
					t.Fatalf("got %v, want ErrInvalidTransition", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.State != tt.to || got.Reason != "why" || got.Ref != "pid:1" {
				t.Fatalf("after transition: %+v", got)
			}
			if tt.to == Running && got.StartedAt == nil || tt.to.Terminal() && got.EndedAt == nil {
				t.Fatalf("timestamps not set: %+v", got)
			}
		})
	}
	// UpdateRun enforces the same rules.
	r := &Run{State: Succeeded}
	if err := s.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	_, err := s.UpdateRun(ctx, r.ID, func(r *Run) error { r.State = Running; return nil })
	if !errors.Is(err, ErrInvalidTransition) {
		t.Fatalf("UpdateRun leaving terminal state: %v", err)
	}
	if _, err := s.Transition(ctx, "missing", Running, "", nil); !errors.Is(err, ErrNotFound) {
		t.Fatalf("transition of a missing run: %v", err)
	}
}

func statesToStrings(ss []State) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return out
}

func TestEvents(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	r := &Run{}
	if err := s.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Transition(ctx, r.ID, Running, "started", nil); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		e, err := s.AppendEvent(ctx, Event{RunID: r.ID, Type: EventProgress, Message: "p"})
		if err != nil {
			t.Fatal(err)
		}
		if e.Seq != uint64(3+i) {
			t.Fatalf("seq = %d, want %d", e.Seq, 3+i)
		}
	}
	// A progress-only update writes no event; a state change does.
	if _, err := s.UpdateRun(ctx, r.ID, func(r *Run) error { r.Progress = &sdk.Progress{Step: 5}; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Transition(ctx, r.ID, Failed, "exit 1", nil); err != nil {
		t.Fatal(err)
	}
	all, err := s.Events(ctx, r.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, e := range all {
		if e.Seq != uint64(i+1) || e.RunID != r.ID || e.Time.IsZero() {
			t.Fatalf("event %d: %+v", i, e)
		}
		got = append(got, e.Type+":"+string(e.State)+":"+e.Message)
	}
	want := "state:queued:created state:running:started progress::p progress::p progress::p state:failed:exit 1"
	if strings.Join(got, " ") != want {
		t.Fatalf("events:\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	page, err := s.Events(ctx, r.ID, 2, 2)
	if err != nil || len(page) != 2 || page[0].Seq != 3 || page[1].Seq != 4 {
		t.Fatalf("page after 2: %+v, %v", page, err)
	}
	if _, err := s.AppendEvent(ctx, Event{RunID: "nope", Type: EventNote}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("event for a missing run: %v", err)
	}
	// Another run's events do not leak in, even when its id extends this one.
	other := &Run{ID: r.ID + "x"}
	if err := s.CreateRun(ctx, other); err != nil {
		t.Fatal(err)
	}
	if again, _ := s.Events(ctx, r.ID, 0, 0); len(again) != len(all) {
		t.Fatalf("events of %s: %d, want %d", r.ID, len(again), len(all))
	}
}

func TestRedactEnv(t *testing.T) {
	tests := []struct{ in, want string }{
		{"HF_TOKEN=abc", "HF_TOKEN=<redacted>"},
		{"GITHUB_TOKEN=abc", "GITHUB_TOKEN=<redacted>"},
		{"AWS_SECRET_ACCESS_KEY=abc", "AWS_SECRET_ACCESS_KEY=<redacted>"},
		{"OPENAI_API_KEY=abc", "OPENAI_API_KEY=<redacted>"},
		{"my_api_key=abc", "my_api_key=<redacted>"},
		{"DB_PASSWORD=hunter2", "DB_PASSWORD=<redacted>"},
		{"PGPASSWD=x", "PGPASSWD=<redacted>"},
		{"MYSQL_PWD=x", "MYSQL_PWD=<redacted>"},
		{"DB_PASS=x", "DB_PASS=<redacted>"},
		{"GOOGLE_APPLICATION_CREDENTIALS=/k.json", "GOOGLE_APPLICATION_CREDENTIALS=<redacted>"},
		{"NPM_AUTH=x", "NPM_AUTH=<redacted>"},
		{"HTTP_AUTHORIZATION=Bearer x", "HTTP_AUTHORIZATION=<redacted>"},
		{"SSH_PRIVATE_KEY_PATH=x", "SSH_PRIVATE_KEY_PATH=<redacted>"},
		{"SIGNINGKEY=x", "SIGNINGKEY=<redacted>"},
		{"DATABASE_URL=postgres://u:pw@db/x", "DATABASE_URL=<redacted>"},
		{"WHATEVER=ghp_abcdefghijklmnopqrstuvwx", "WHATEVER=<redacted>"},
		{"GIT_AUTHOR_NAME=Ann", "GIT_AUTHOR_NAME=Ann"},
		{"PWD=/home/ann", "PWD=/home/ann"},
		{"PATH=/usr/bin", "PATH=/usr/bin"},
		{"PASSENGERS=3", "PASSENGERS=3"},
		{"CUDA_VISIBLE_DEVICES=0", "CUDA_VISIBLE_DEVICES=0"},
		{"URL=https://example.com/a", "URL=https://example.com/a"},
		{"EMPTY_TOKEN=", "EMPTY_TOKEN="},
		{"NOEQUALS", "NOEQUALS"},
		{"TOKEN=a=b", "TOKEN=<redacted>"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := RedactEnv([]string{tt.in})[0]; got != tt.want {
				t.Fatalf("RedactEnv(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
	if RedactEnv(nil) != nil {
		t.Fatal("RedactEnv(nil) should be nil")
	}
}

func TestRunSecretsNeverStored(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTest(t, dir)
	r := &Run{Spec: sandbox.Spec{Env: []string{"API_TOKEN=s3cr3t-value", "MODE=fast"}}}
	if err := s.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	if r.Spec.Env[0] != "API_TOKEN=s3cr3t-value" {
		t.Fatal("CreateRun must not redact the caller's env (it still has to start the run)")
	}
	if _, err := s.UpdateRun(ctx, r.ID, func(r *Run) error {
		r.Spec.Env = append(r.Spec.Env, "NEW_SECRET=s3cr3t-value")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	got, _ := s.GetRun(ctx, r.ID)
	if strings.Join(got.Spec.Env, " ") != "API_TOKEN=<redacted> MODE=fast NEW_SECRET=<redacted>" {
		t.Fatalf("stored env: %v", got.Spec.Env)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	grepDir(t, dir, "s3cr3t-value")
}

// grepDir fails if any file under dir contains needle.
func grepDir(t *testing.T, dir, needle string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(dir + "/" + e.Name())
		if err == nil && strings.Contains(string(b), needle) {
			t.Fatalf("%s contains the secret in clear", e.Name())
		}
	}
}

func TestSchemaTooNew(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir)
	if err := s.db.Set([]byte(schemaKey), []byte("99"), nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := Open(dir, Options{})
	if !errors.Is(err, ErrSchemaTooNew) || !strings.Contains(err.Error(), "newer runbox (schema 99") {
		t.Fatalf("got %v, want ErrSchemaTooNew", err)
	}
	// The failed open released the directory.
	if err := s.Close(); !errors.Is(err, ErrClosed) {
		t.Fatalf("second close: %v", err)
	}
	if _, err := s.GetRun(context.Background(), "x"); !errors.Is(err, ErrClosed) {
		t.Fatalf("read after close: %v", err)
	}
}

func TestSecondOpenFails(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir)
	_, err := Open(dir, Options{})
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "in use by another process") {
		t.Fatalf("second open in-process: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// Another process holds it.
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=hold", "RUNBOX_STORE_TEST_DIR="+dir)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "ready\n" {
		t.Fatalf("helper said %q", line)
	}
	_, err = Open(dir, Options{})
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("open while another process holds the store: %v", err)
	}
	t.Logf("locked error: %v", err)
	_ = stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper: %v", err)
	}
	openTest(t, dir) // free again
}
