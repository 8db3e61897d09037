package cmd

import (
	"context"
	"fmt"

	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/proxy"
)

// cdnLoader is the loader of the CDN edge lists, caching in dir.
func cdnLoader(env *Env, dir string) *proxy.Loader {
	return &proxy.Loader{CacheDir: dir, Client: env.HTTPClient, UserAgent: "lohibot-audit/" + Version, Now: env.Now, URL: env.cdnURL}
}

// ipsUpdateCDN fetches the CDN edge lists now (`ips update`) and says what
// became of each: a line on stdout per list fetched; for a list that could
// not be had or was refused, the error (exit 3) after the rest is said,
// with what stays in force.
func ipsUpdateCDN(ctx context.Context, env *Env, dir string) error {
	lines, err := cdnLoader(env, dir).Update(ctx).Updated(dir)
	for _, l := range lines {
		fmt.Fprintln(env.Stdout, l)
	}
	if err != nil {
		return fail.New(fail.Incomplete, err, "")
	}
	return nil
}
