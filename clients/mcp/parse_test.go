package mcp

import (
	"slices"
	"testing"
)

func TestParseCommand(t *testing.T) {
	for _, tt := range []struct {
		in    any
		argv  []string
		shell bool
		bad   bool
	}{
		{"python train.py --epochs 3", []string{"python", "train.py", "--epochs", "3"}, false, false},
		{"  python   train.py  ", []string{"python", "train.py"}, false, false},
		{"python train.py --lr=0.1", []string{"python", "train.py", "--lr=0.1"}, false, false},
		{"python train.py | tee log", []string{"python train.py | tee log"}, true, false},
		{"FOO=1 python train.py", []string{"FOO=1 python train.py"}, true, false},
		{`python -c "print(1)"`, []string{`python -c "print(1)"`}, true, false},
		{"echo $HOME", []string{"echo $HOME"}, true, false},
		{[]any{"python", "a b.py"}, []string{"python", "a b.py"}, false, false},
		{"", nil, false, true},
		{[]any{}, nil, false, true},
		{[]any{"python", 3}, nil, false, true},
		{[]any{""}, nil, false, true},
		{3.0, nil, false, true},
		{nil, nil, false, true},
	} {
		argv, shell, err := parseCommand(tt.in)
		if (err != nil) != tt.bad || !slices.Equal(argv, tt.argv) || shell != tt.shell {
			t.Errorf("parseCommand(%#v) = %q %v %v", tt.in, argv, shell, err)
		}
	}
	if s := scriptIn("cd src && python3 ./train.py --x 1 | tee out"); s != "./train.py" {
		t.Errorf("script in a shell line: %q", s)
	}
}

func TestParseMemory(t *testing.T) {
	for _, tt := range []struct {
		in   any
		want int64
	}{
		{"512m", 512 << 20}, {"4g", 4 << 30}, {"8GiB", 8 << 30}, {"1.5GB", 3 << 29}, {"8192k", 8 << 20},
		{float64(64 << 20), 64 << 20},
		{"lots", -1}, {"1k", -1}, {"-4g", -1}, {true, -1}, {"", -1},
	} {
		n, err := parseMemory(tt.in)
		if tt.want < 0 {
			if err == nil {
				t.Errorf("parseMemory(%#v) = %d, want an error", tt.in, n)
			}
			continue
		}
		if err != nil || n != tt.want {
			t.Errorf("parseMemory(%#v) = %d %v, want %d", tt.in, n, err, tt.want)
		}
	}
}
