package cmd

import (
	"context"

	"github.com/lohisoft/lohibot-audit/audit"
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

// setup is what the flags of o check the crawlers of profiles against,
// for env (audit.Setup): its phases are env's.
func (o *auditOptions) setup(env *Env, profiles []*crawler.Profile) *audit.Setup {
	return &audit.Setup{
		Profiles: profiles, Identity: o.identity(env),
		Robots: o.Robots, RobotsLoader: robotsLoader(env),
		OptedOut: o.OptedOut, OptOutGrace: o.OptOutGrace, Now: env.Now(),
		OnPhase: func(p audit.Phase) { env.phase(string(p)) },
	}
}

// newIdentityFor loads the identity of profiles as the identity flags say
// (verify.Settings.Identity), held as a run holds it (heldIdentity).
func newIdentityFor(ctx context.Context, env *Env, o *auditOptions, profiles []*crawler.Profile) (*verify.Identity, error) {
	vid, repeated, err := o.identity(env).Identity(ctx, profiles)
	if err != nil {
		return nil, err
	}
	return heldIdentity(env, o, vid, repeated), nil
}

// heldIdentity is vid as a run in env holds it: the warnings already said
// within their period (repeated) are not said again, and a terminal shows
// a progress line while addresses are verified.
func heldIdentity(env *Env, o *auditOptions, vid *verify.Identity, repeated []string) *verify.Identity {
	for _, w := range repeated {
		if env.repeated == nil {
			env.repeated = map[string]bool{}
		}
		env.repeated[w] = true
	}
	if progressWanted(env, o) {
		vid.Watch = progress.Verification(env.Stderr, progressOptions(env))
	}
	return vid
}
