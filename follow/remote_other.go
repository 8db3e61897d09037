//go:build !linux

package follow

// remote returns "": network file systems are not told apart here.
func remote(dir string) string { return "" }
