package crawler

import "testing"

func TestProductToken(t *testing.T) {
	tests := []struct{ in, want string }{
		{"LohiSoftBot", "LohiSoftBot"},
		{"LohiSoftBot/1.0", "LohiSoftBot"},
		{"LohiSoftBot/1.0 (+https://lohisoft.com/bot)", "LohiSoftBot"},
		{"  Lohi_Soft-Bot x", "Lohi_Soft-Bot"},
		{"LohiSoftBot2", "LohiSoftBot"},
		{"*", ""},
		{"", ""},
		{"1.0", ""},
	}
	for _, tc := range tests {
		if got := ProductToken(tc.in); got != tc.want {
			t.Errorf("ProductToken(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
