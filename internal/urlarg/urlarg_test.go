package urlarg

import (
	"errors"
	"testing"
)

func TestScheme(t *testing.T) {
	for in, want := range map[string]string{
		"https://example.com/robots.txt": "https",
		"HTTP://example.com/":            "http",
		"ftp://example.com/robots.txt":   "ftp",
		"s3+x-y.z://bucket/list":         "s3+x-y.z",
		"robots.txt":                     "",
		"-":                              "",
		"":                               "",
		"://example.com":                 "",
		"/srv/http://x":                  "",
		"./a://b":                        "",
		"1http://x":                      "",
		"www.example.org=https://x":      "",
		"C:\\lists\\ips.json":            "",
	} {
		if got := Scheme(in); got != want {
			t.Errorf("Scheme(%q) = %q, want %q", in, got, want)
		}
		if got := IsURL(in); got != (want != "") {
			t.Errorf("IsURL(%q) = %v, want %v", in, got, want != "")
		}
	}
}

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		in      string
		schemes []string
		want    string // "" for no error
	}{
		{"https://example.com/ips.json", []string{"https"}, ""},
		{"HTTPS://example.com/ips.json", []string{"https"}, ""},
		{"ips.json", []string{"https"}, ""},
		{"http://example.com/ips.json", []string{"https"}, "http:// is not a scheme this can fetch: use https://, or a file"},
		{"ftp://example.com/robots.txt", []string{"http", "https"}, "ftp:// is not a scheme this can fetch: use http:// or https://, or a file"},
		{"gopher://x", []string{"a", "b", "c"}, "gopher:// is not a scheme this can fetch: use a://, b:// or c://, or a file"},
	} {
		err := Check(c.in, c.schemes...)
		if c.want == "" {
			if err != nil {
				t.Errorf("Check(%q, %q) = %v, want nil", c.in, c.schemes, err)
			}
			continue
		}
		var se *SchemeError
		if !errors.As(err, &se) || err.Error() != c.want {
			t.Errorf("Check(%q, %q) = %v, want a *SchemeError %q", c.in, c.schemes, err, c.want)
		}
	}
}
