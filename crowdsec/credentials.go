package crowdsec

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/lohisoft/lohibot-audit/internal/fail"
	"gopkg.in/yaml.v3"
)

// DefaultCredentialsFile is where CrowdSec keeps the local machine's
// credentials for its Local API (cscli machines add -a writes it).
const DefaultCredentialsFile = "/etc/crowdsec/local_api_credentials.yaml"

// maxCredentialsFile bounds the credentials file read: it is a few lines.
const maxCredentialsFile = 64 << 10

// ErrCredentials means a credentials file cannot be used: unreadable, not
// YAML, or without a usable url, login or password.
var ErrCredentials = errors.New("bad crowdsec credentials")

// Credentials are a machine's credentials for a Local API, as CrowdSec's
// local_api_credentials.yaml holds them. The password is kept out of
// String and of every error.
type Credentials struct {
	// URL is the Local API's base URL, such as http://127.0.0.1:8080/.
	URL string
	// Login and Password are the machine's (cscli machines add).
	Login    string
	Password string
	// CACert is the file of the certificate authority that signs an
	// https Local API's certificate (ca_cert_path), when the system's
	// roots do not.
	CACert string
	// Source names where the credentials came from, for messages.
	Source string
}

// String names the machine and the Local API, never the password.
func (c Credentials) String() string {
	return fmt.Sprintf("machine %s at %s", strconv.Quote(c.Login), c.URL)
}

// credentialsFile is the file's layout; CrowdSec's own field names.
type credentialsFile struct {
	URL      string `yaml:"url"`
	Login    string `yaml:"login"`
	Password string `yaml:"password"`
	CACert   string `yaml:"ca_cert_path"`
	Cert     string `yaml:"cert_path"`
	Key      string `yaml:"key_path"`
}

// ParseCredentials reads a credentials file's content. source names it in
// errors. It returns an error wrapping ErrCredentials when the YAML is not
// valid, when url is not an http or https URL with a host, or when login
// or password is missing (a machine that logs in with a TLS certificate
// alone is not supported).
func ParseCredentials(data []byte, source string) (Credentials, error) {
	var f credentialsFile
	if err := yaml.Unmarshal(data, &f); err != nil {
		// yaml.v3 quotes a scalar it cannot take between backquotes: that
		// could be the password, so it is left out.
		msg := yamlQuoted.ReplaceAllString(firstLine(err.Error()), "a value")
		return Credentials{}, fmt.Errorf("%w: %s is not YAML: %s", ErrCredentials, source, msg)
	}
	c := Credentials{URL: strings.TrimSpace(f.URL), Login: f.Login, Password: f.Password, CACert: f.CACert, Source: source}
	u, err := url.Parse(c.URL)
	switch {
	case c.URL == "":
		return Credentials{}, fmt.Errorf("%w: %s has no url", ErrCredentials, source)
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "":
		return Credentials{}, fmt.Errorf("%w: %s: url %s is not an http:// or https:// address of a Local API", ErrCredentials, source, strconv.QuoteToASCII(clip(c.URL, 100)))
	case c.Login == "" && (f.Cert != "" || f.Key != ""):
		return Credentials{}, fmt.Errorf("%w: %s: logging in with a TLS certificate is not supported; add a machine with a password (cscli machines add NAME --auto -f FILE)", ErrCredentials, source)
	case c.Login == "":
		return Credentials{}, fmt.Errorf("%w: %s has no login", ErrCredentials, source)
	case c.Password == "":
		return Credentials{}, fmt.Errorf("%w: %s has no password for machine %s", ErrCredentials, source, strconv.QuoteToASCII(clip(c.Login, 100)))
	}
	c.URL = strings.TrimRight(u.String(), "/")
	return c, nil
}

// ReadCredentials reads and parses the credentials file at path.
func ReadCredentials(path string) (Credentials, error) {
	f, err := os.Open(path)
	if err != nil {
		return Credentials{}, fmt.Errorf("%w: %v", ErrCredentials, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxCredentialsFile+1))
	if err != nil {
		return Credentials{}, fmt.Errorf("%w: reading %s: %v", ErrCredentials, path, err)
	}
	if len(data) > maxCredentialsFile {
		return Credentials{}, fmt.Errorf("%w: %s is larger than %d KiB: is it a credentials file?", ErrCredentials, path, maxCredentialsFile>>10)
	}
	return ParseCredentials(data, path)
}

// LoadCredentials is ReadCredentials for the command line: a file that
// cannot be used is a usage error, said in one line, with how to make one.
func LoadCredentials(path string) (Credentials, error) {
	c, err := ReadCredentials(path)
	if err != nil {
		return c, fail.Hinted(errors.New(fail.PathCause(err).Error()),
			"give a Local API machine's credentials with --crowdsec-credentials FILE ('cscli machines add NAME --auto -f FILE' writes one)")
	}
	return c, nil
}

// yamlQuoted is a value yaml.v3 quotes in an error.
var yamlQuoted = regexp.MustCompile("`[^`]*`")

// firstLine is s up to its first line break.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// clip cuts s to at most n bytes (n at least 3), marking the cut with
// "...".
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}
