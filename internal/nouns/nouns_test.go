package nouns

import "testing"

func TestCount(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{Count(0, "file", "files"), "0 files"},
		{Count(1, "file", "files"), "1 file"},
		{Count(2, "file", "files"), "2 files"},
		{Count(int64(-1), "line", "lines"), "-1 lines"},
		{Count(int64(1234567), "line", "lines"), "1234567 lines"},
		{Count(uint64(1), "event", "events"), "1 event"},
		{Count(uint64(1<<63), "event", "events"), "9223372036854775808 events"},
		{Of(1, "is", "are"), "is"},
		{Of(3, "is", "are"), "are"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
