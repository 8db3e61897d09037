package crowdsec

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot-audit/internal/fail"
)

func TestParseCredentials(t *testing.T) {
	const pw = "s3cret-Pa55word-never-shown"
	for _, tc := range []struct {
		name, in string
		want     Credentials
		err      string // part of the error; "" for none
	}{
		{"cscli's file", "url: http://127.0.0.1:8080\nlogin: 3d1219c7\npassword: " + pw + "\n",
			Credentials{URL: "http://127.0.0.1:8080", Login: "3d1219c7", Password: pw}, ""},
		{"trailing slash and spaces", "url: ' https://lapi.example:8443/ '\nlogin: web1\npassword: " + pw + "\nca_cert_path: /etc/crowdsec/ca.pem\n",
			Credentials{URL: "https://lapi.example:8443", Login: "web1", Password: pw, CACert: "/etc/crowdsec/ca.pem"}, ""},
		{"unknown keys ignored", "url: http://[::1]:8080/\nlogin: a\npassword: " + pw + "\nextra: 1\n",
			Credentials{URL: "http://[::1]:8080", Login: "a", Password: pw}, ""},
		{"no url", "login: a\npassword: " + pw, Credentials{}, "has no url"},
		{"not http", "url: ftp://x/\nlogin: a\npassword: " + pw, Credentials{}, "is not an http:// or https:// address"},
		{"no host", "url: http:///v1\nlogin: a\npassword: " + pw, Credentials{}, "is not an http:// or https:// address"},
		{"user in url", "url: http://u:p@x:8080/\nlogin: a\npassword: " + pw, Credentials{}, "is not an http:// or https:// address"},
		{"no login", "url: http://x:8080\npassword: " + pw, Credentials{}, "has no login"},
		{"no password", "url: http://x:8080\nlogin: a\n", Credentials{}, `has no password for machine "a"`},
		{"certificate only", "url: https://x:8080\ncert_path: /c.pem\nkey_path: /k.pem\n", Credentials{}, "logging in with a TLS certificate is not supported"},
		{"not yaml", "url: [http://x\npassword: " + pw, Credentials{}, "is not YAML"},
		{"a password where a map is", "url: http://x:8080\nlogin: a\npassword:\n  " + pw + ": 1\n", Credentials{}, "is not YAML"},
		{"empty", "", Credentials{}, "has no url"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseCredentials([]byte(tc.in), "creds.yaml")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrCredentials) {
					t.Fatalf("err = %v, want one saying %q", err, tc.err)
				}
				if strings.Contains(err.Error(), pw) {
					t.Errorf("the error shows the password: %v", err)
				}
				if !strings.Contains(err.Error(), "creds.yaml") {
					t.Errorf("the error does not name the file: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.want.Source = "creds.yaml"
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
			if strings.Contains(got.String(), pw) {
				t.Errorf("String shows the password: %s", got)
			}
		})
	}
}

func TestReadCredentials(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadCredentials(filepath.Join(dir, "none.yaml")); !errors.Is(err, ErrCredentials) || !strings.Contains(err.Error(), "none.yaml") {
		t.Errorf("missing file: %v", err)
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, make([]byte, maxCredentialsFile+1), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadCredentials(big); !errors.Is(err, ErrCredentials) || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("large file: %v", err)
	}
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte("url: http://127.0.0.1:8080/\nlogin: m\npassword: p\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := ReadCredentials(good)
	if err != nil || c.URL != "http://127.0.0.1:8080" || c.Source != good {
		t.Errorf("good file: %+v, %v", c, err)
	}
}

func FuzzParseCredentials(f *testing.F) {
	f.Add([]byte("url: http://127.0.0.1:8080\nlogin: m\npassword: p\n"))
	f.Add([]byte("url: https://[::1]:8443/\nlogin: m\npassword: p\nca_cert_path: /x\n"))
	f.Add([]byte("url: ftp://x\n"))
	f.Add([]byte("{url: [1, 2], login: {a: b}}"))
	f.Add([]byte("\xff\xfe"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseCredentials(data, "fuzz.yaml")
		if err != nil {
			if !errors.Is(err, ErrCredentials) {
				t.Fatalf("error does not wrap ErrCredentials: %v", err)
			}
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error is not one line: %q", err)
			}
			return
		}
		if !strings.HasPrefix(c.URL, "http://") && !strings.HasPrefix(c.URL, "https://") {
			t.Fatalf("url %q accepted", c.URL)
		}
		if c.Login == "" || c.Password == "" {
			t.Fatalf("accepted without login or password: %+v", c)
		}
		if strings.HasSuffix(c.URL, "/") {
			t.Fatalf("url %q keeps its trailing slash", c.URL)
		}
	})
}

// TestLoadCredentials: a file that cannot be used is a usage error of one
// line that names it, with how to make one; a good one is read.
func TestLoadCredentials(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "none.yaml")
	_, err := LoadCredentials(missing)
	if err == nil || fail.KindOf(err) != fail.Usage || !strings.Contains(err.Error(), "none.yaml: no such file or directory") ||
		strings.Contains(err.Error(), "\n") || !strings.Contains(fail.HintOf(err), "cscli machines add NAME --auto -f FILE") {
		t.Errorf("missing file: %v (hint %q)", err, fail.HintOf(err))
	}
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte("url: http://127.0.0.1:8080/\nlogin: m\npassword: p\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if c, err := LoadCredentials(good); err != nil || c.Login != "m" {
		t.Errorf("good file: %+v, %v", c, err)
	}
}
