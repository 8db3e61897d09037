package progress

import "testing"

func TestWanted(t *testing.T) {
	env := func(vars map[string]string) func(string) string {
		return func(k string) string { return vars[k] }
	}
	tests := []struct {
		name   string
		tty    bool
		off    bool
		getenv func(string) string
		want   bool
	}{
		{"terminal", true, false, env(nil), true},
		{"not a terminal", false, false, env(nil), false},
		{"CI", true, false, env(map[string]string{"CI": "true"}), false},
		{"dumb terminal", true, false, env(map[string]string{"TERM": "dumb"}), false},
		{"another terminal", true, false, env(map[string]string{"TERM": "xterm-256color"}), true},
		{"--no-progress", true, true, env(nil), false},
	}
	for _, tc := range tests {
		if got := Wanted(tc.tty, tc.off, tc.getenv); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
