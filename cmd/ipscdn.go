package cmd

import "github.com/lohisoft/lohibot-audit/proxy"

// cdnLoader is the loader of the CDN edge lists, caching in dir.
func cdnLoader(env *Env, dir string) *proxy.Loader {
	return &proxy.Loader{CacheDir: dir, Client: env.HTTPClient, UserAgent: "lohibot-audit/" + Version, Now: env.Now, URL: env.cdnURL}
}
