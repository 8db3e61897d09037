package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/render"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// filled sets every exported field of v, at any depth, to a value that is
// not its zero value: a string, 1, true, a time, a list of one; so that
// the JSON of a filled report shows every key it can have.
func filled(v reflect.Value) {
	switch {
	case v.Type() == reflect.TypeOf(time.Time{}):
		v.Set(reflect.ValueOf(time.Date(2026, 12, 1, 6, 3, 42, 0, time.UTC)))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(1)
	case reflect.Float64:
		v.SetFloat(1.5)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		filled(s.Index(0))
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k := reflect.New(v.Type().Key()).Elem()
		filled(k)
		e := reflect.New(v.Type().Elem()).Elem()
		filled(e)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		filled(p.Elem())
		v.Set(p)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				filled(v.Field(i))
			}
		}
	}
}

// filledReportJSON is a report with every field set, as logs --format
// json writes it.
func filledReportJSON(t *testing.T) []byte {
	t.Helper()
	var rep audit.Report
	filled(reflect.ValueOf(&rep).Elem())
	var buf bytes.Buffer
	f, _ := render.Lookup("json")
	if err := f.WriteReport(&buf, &rep, render.Options{}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// reportSchema compiles docs/report.schema.json, with its formats
// (date-time) asserted.
func reportSchema(t *testing.T) (*jsonschema.Schema, map[string]any) {
	t.Helper()
	f, err := os.Open("../docs/report.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatalf("docs/report.schema.json: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("report.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("report.schema.json")
	if err != nil {
		t.Fatalf("docs/report.schema.json: %v", err)
	}
	return sch, doc.(map[string]any)
}

func validateReport(t *testing.T, sch *jsonschema.Schema, name string, report []byte) {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(report))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("%s does not follow docs/report.schema.json:\n%v", name, err)
	}
}

// The sample run's report, and one of several crawlers with a violation
// of each kind the sample shows, follow docs/report.schema.json, and say
// the schema's version.
func TestReportFollowsSchema(t *testing.T) {
	sch, _ := reportSchema(t)
	sample := []string{"../testdata/sample/access.log", "../testdata/sample/access.log.1.gz"}
	for name, args := range map[string][]string{
		"the sample run":         append([]string{"logs", "--offline", "--no-cache", "--format", "json"}, sample...),
		"the sample with robots": append([]string{"logs", "--offline", "--no-cache", "--format", "json", "--robots", "../testdata/sample/robots.txt"}, sample...),
		"several crawlers":       append([]string{"logs", "--offline", "--no-cache", "--format", "json", "--crawler", "lohisoftbot", "--crawler", "googlebot"}, sample...),
	} {
		code, out, errOut := runInMemory(t, "", args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, errOut)
		}
		validateReport(t, sch, name, []byte(out))
		var head struct {
			SchemaVersion *int `json:"schema_version"`
		}
		if err := json.Unmarshal([]byte(out), &head); err != nil || head.SchemaVersion == nil || *head.SchemaVersion != audit.SchemaVersion {
			t.Errorf("%s: schema_version %v, want %d", name, head.SchemaVersion, audit.SchemaVersion)
		}
	}
	// The schema is not a yes to everything.
	for name, bad := range map[string]string{
		"no summary":     `{"tool":"lohibot-audit","version":"1","schema_version":1,"ips":[],"sites":[],"violations":[],"malformed_examples":[],"warnings":[],"generated_at":"2026-12-01T00:00:00Z"}`,
		"a bad verdict":  `{"tool":"lohibot-audit","version":"1","schema_version":1,"summary":{"files":0,"lines":0,"malformed":0,"claimed_hits":0,"genuine_hits":0,"spoofed_hits":0,"unverified_hits":0,"violations":0,"log_format":"","ip_list_source":""},"ips":[{"ip":"192.0.2.1","verdict":"maybe","method":"","reason":"","ptr":[],"forward":[],"in_ip_list":false,"hits":1,"user_agents":[]}],"sites":[],"violations":[],"malformed_examples":[],"warnings":[],"generated_at":"2026-12-01T00:00:00Z"}`,
		"a bad time":     `{"tool":"lohibot-audit","version":"1","schema_version":1,"summary":{"files":0,"lines":0,"malformed":0,"claimed_hits":0,"genuine_hits":0,"spoofed_hits":0,"unverified_hits":0,"violations":0,"log_format":"","ip_list_source":""},"ips":[],"sites":[],"violations":[],"malformed_examples":[],"warnings":[],"generated_at":"yesterday"}`,
		"another layout": `{"tool":"lohibot-audit","version":"1","schema_version":2,"summary":{"files":0,"lines":0,"malformed":0,"claimed_hits":0,"genuine_hits":0,"spoofed_hits":0,"unverified_hits":0,"violations":0,"log_format":"","ip_list_source":""},"ips":[],"sites":[],"violations":[],"malformed_examples":[],"warnings":[],"generated_at":"2026-12-01T00:00:00Z"}`,
	} {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(bad))
		if err != nil {
			t.Fatal(err)
		}
		if sch.Validate(inst) == nil {
			t.Errorf("the schema accepts a report with %s", name)
		}
	}
}

// undescribed names every key of the report rep (decoded JSON) that the
// schema doc does not describe, at any depth: a map's keys (such as
// violations_left_out's kinds) are described by its additionalProperties.
func undescribed(doc map[string]any, rep any) []string {
	defs, _ := doc["$defs"].(map[string]any)
	resolve := func(s map[string]any) map[string]any {
		for {
			ref, ok := s["$ref"].(string)
			if !ok {
				return s
			}
			s, _ = defs[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any)
		}
	}
	var missing []string
	var walk func(path string, v any, s map[string]any)
	walk = func(path string, v any, s map[string]any) {
		s = resolve(s)
		switch v := v.(type) {
		case map[string]any:
			props, _ := s["properties"].(map[string]any)
			values, _ := s["additionalProperties"].(map[string]any)
			for k, sub := range v {
				ps, ok := props[k].(map[string]any)
				if !ok && values != nil {
					ps, ok = values, true
				}
				if !ok {
					missing = append(missing, path+"."+k)
					continue
				}
				walk(path+"."+k, sub, ps)
			}
		case []any:
			items, _ := s["items"].(map[string]any)
			for _, e := range v {
				walk(path+"[]", e, items)
			}
		}
	}
	walk("report", rep, doc)
	slices.Sort(missing)
	return slices.Compact(missing)
}

// Every key a report can have is described in docs/report.schema.json:
// a field added to the report must be added there too.
func TestSchemaDescribesEveryField(t *testing.T) {
	_, doc := reportSchema(t)
	var rep any
	if err := json.Unmarshal(filledReportJSON(t), &rep); err != nil {
		t.Fatal(err)
	}
	for _, k := range undescribed(doc, rep) {
		t.Errorf("docs/report.schema.json does not describe %s: add it there", k)
	}
}

// Reports of varied runs (several crawlers with a profile file, a site
// behind a CDN with and without the real client logged, DNS evidence of a
// genuine crawler, violations of several kinds with some left out, an
// opt-out, dated robots.txt) follow the schema, and carry no key it does
// not describe.
func TestVariedReportsFollowSchema(t *testing.T) {
	sch, doc := reportSchema(t)
	var pauses strings.Builder
	for i := range 6 {
		fmt.Fprintf(&pauses, "79.139.58.98 - - [02/Dec/2026:10:00:00 +0000] \"GET /p%d HTTP/1.1\" 200 512 \"-\" \"LohiSoftBot/1.0 (+https://lohisoft.com/bot)\"\n", i)
	}
	fmt.Fprintf(&pauses, "79.139.58.98 - - [02/Dec/2026:10:00:09 +0000] \"GET /admin/ HTTP/1.1\" 401 0 \"-\" \"LohiSoftBot/1.0 (+https://lohisoft.com/bot)\"\n")
	type run struct {
		env  func() (*Env, []string)
		args []string
	}
	plain := func(stdin string) func() (*Env, []string) {
		return func() (*Env, []string) {
			return &Env{Now: func() time.Time { return fixedNow }, Stdin: strings.NewReader(stdin)},
				[]string{"--offline", "--cache-dir", t.TempDir()}
		}
	}
	cdn := func(log string) func() (*Env, []string) {
		return func() (*Env, []string) {
			env, args, _ := cdnEnv(t, log)
			return env, args
		}
	}
	seen := map[string]bool{}
	for name, r := range map[string]run{
		"several crawlers and a profile file": {plain(""), []string{"--crawler", "lohisoftbot", "--crawler", "googlebot", "--crawler", "bingbot",
			"--crawler", "../testdata/crawlers/examplebot.yaml", "../testdata/crawlers/access.log"}},
		"behind a CDN, no real client logged":   {cdn(cdnFrontedLog), []string{"-"}},
		"behind a trusted CDN, DNS evidence":    {cdn(cdnMainLog), []string{"--trusted-proxy", "cloudflare", "-"}},
		"violations, some left out, an opt-out": {plain(pauses.String()), []string{"--site", "www.example.org", "--max-violations", "2", "--opted-out", "www.example.org=2026-12-01T00:00:00Z", "-"}},
		"robots.txt and several files":          {plain(""), []string{"--robots", "../testdata/sample/robots.txt", "../testdata/sample/access.log", "../testdata/sample/access.log.1.gz", "../testdata/e2e/shop-access.log"}},
	} {
		env, base := r.env()
		args := append(append([]string{"logs", "--format", "json"}, base...), r.args...)
		code, out, errOut := identityRun(t, env, args...)
		if code != 0 {
			t.Errorf("%s: exit %d: %s", name, code, errOut)
			continue
		}
		validateReport(t, sch, name, []byte(out))
		var rep any
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, k := range undescribed(doc, rep) {
			t.Errorf("%s: docs/report.schema.json does not describe %s: add it there", name, k)
		}
		keyPaths("report", rep, seen)
	}
	// The runs above are varied enough to show what they are meant to.
	for _, k := range []string{"report.ips[].crawler", "report.ips[].proxy", "report.ips[].dns[].rcode", "report.inputs[].client_field",
		"report.inputs[].real_client_hits", "report.summary.crawlers[].category", "report.summary.violations_left_out",
		"report.sites[].violations_left_out", "report.ip_lists[].sha256", "report.violations[].kind"} {
		if !seen[k] {
			t.Errorf("no run's report has %s", k)
		}
	}
}

// keyPaths adds the path of every key in v to seen.
func keyPaths(path string, v any, seen map[string]bool) {
	switch v := v.(type) {
	case map[string]any:
		for k, sub := range v {
			seen[path+"."+k] = true
			keyPaths(path+"."+k, sub, seen)
		}
	case []any:
		for _, e := range v {
			keyPaths(path+"[]", e, seen)
		}
	}
}
