package cmd

import (
	"strings"
	"testing"
)

// TestLogsHostileArchive: an xz file whose block asks for a 1.5 GiB
// dictionary (made by xz --lzma2=dict=1MiB, its header then set to
// 1536MiB as xz --lzma2=dict=1536MiB writes it) and a zstd file made with
// zstd --long=31 from a pipe (a 2 GiB window) are refused with exit 3,
// saying why and which --max-dict reads them; the other inputs are read.
func TestLogsHostileArchive(t *testing.T) {
	for _, tc := range []struct{ file, says string }{
		{"dict-1536MiB.log.xz", "xz data needs a dictionary of 1536MiB, more than the 128MiB the decompressor may allocate"},
		{"window-2GiB.log.zst", "zstd data needs a window of 2048MiB, more than the 128MiB"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			code, out, errOut := runInMemory(t, "", "logs", "--offline", "--no-cache", "--format", "json",
				"../testdata/hostile/"+tc.file, "../testdata/sample/access.log")
			if code != 3 {
				t.Fatalf("exit %d, want 3: %s", code, errOut)
			}
			if !strings.Contains(errOut, tc.says) || !strings.Contains(out, tc.says) {
				t.Errorf("stderr %q / report do not say %q", errOut, tc.says)
			}
			if !strings.Contains(errOut, "--max-dict") {
				t.Errorf("stderr %q does not name --max-dict", errOut)
			}
			if !strings.Contains(out, `"file": "../testdata/sample/access.log"`) {
				t.Errorf("the other input is not in the report:\n%s", out)
			}
		})
	}
}

func TestReadFlagsChecked(t *testing.T) {
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"--max-dict", "1KiB"}, "bad --max-dict"},
		{[]string{"--max-dict", "lots"}, "bad --max-dict"},
		{[]string{"--timezone", "Mars/Olympus"}, `unknown --timezone "Mars/Olympus"`},
	} {
		args := append([]string{"logs", "--offline", "--no-cache"}, tc.args...)
		code, _, errOut := runInMemory(t, "", append(args, "../testdata/sample/access.log")...)
		if code != 2 || !strings.Contains(errOut, tc.says) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errOut, tc.says)
		}
	}
	for _, tc := range []struct {
		in   string
		want int64
	}{{"512", 512}, {"64KiB", 64 << 10}, {"128MiB", 128 << 20}, {"1G", 1 << 30}, {"2gb", 2 << 30}} {
		if got, err := parseByteSize(tc.in); err != nil || got != tc.want {
			t.Errorf("parseByteSize(%q) = %d, %v", tc.in, got, err)
		}
	}
}
