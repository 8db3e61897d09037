package cmd

import (
	"context"

	"github.com/lohisoft/lohibot-audit/internal/interrupt"
	"github.com/lohisoft/lohibot-audit/robots"
)

// robotsLoader reads robots.txt sources with env's stdin and HTTP client
// (robots.Loader).
func robotsLoader(env *Env) *robots.Loader {
	return &robots.Loader{Stdin: env.Stdin, Client: env.HTTPClient, UserAgent: "lohibot-audit/" + Version}
}

// loadRobots reads one robots.txt source (robots.Loader.Load).
func loadRobots(ctx context.Context, env *Env, src string, onError robots.OnFetchError) (*robots.Source, error) {
	rs, err := robotsLoader(env).Load(ctx, src, onError)
	return rs, interrupt.Cause(ctx, err)
}
