package cmd

import (
	"context"

	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/internal/progress"
	"github.com/lohisoft/lohibot-audit/verify"
)

// identity is the identity flags of o, for env (verify.Settings).
func (o *auditOptions) identity(env *Env) *verify.Settings {
	return &verify.Settings{
		IPList: o.IPList, Offline: o.Offline, CacheDir: o.CacheDir, NoCache: o.NoCache,
		Resolvers: o.Resolvers, DNSTimeout: o.DNSTimeout, DNSRetries: o.DNSRetries, DNSConcurrency: o.DNSConcurrency,
		TrustedProxies: o.TrustedProxies, TrustXFF: o.TrustXFF,
		Getenv: env.Getenv, Client: env.HTTPClient, UserAgent: "lohibot-audit/" + Version, Now: env.Now,
	}
}

// newIdentityFor loads the identity of profiles as the identity flags say
// (verify.Settings.Identity), with a progress line on a terminal; the
// warnings already said within their period are not said again.
func newIdentityFor(ctx context.Context, env *Env, o *auditOptions, profiles []*crawler.Profile) (*verify.Identity, error) {
	vid, repeated, err := o.identity(env).Identity(ctx, profiles)
	if err != nil {
		return nil, err
	}
	for _, w := range repeated {
		if env.repeated == nil {
			env.repeated = map[string]bool{}
		}
		env.repeated[w] = true
	}
	if progressWanted(env, o) {
		vid.Watch = progress.Verification(env.Stderr, progressOptions(env))
	}
	return vid, nil
}
