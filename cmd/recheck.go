package cmd

import (
	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/spf13/cobra"
)

// runVerifyRecheck is verify --recheck REPORT: the report of an earlier
// logs run, its unverified addresses and expired evidence asked about
// again (audit.Recheck), printed in the same shape.
func runVerifyRecheck(c *cobra.Command, env *Env, o *auditOptions, crawlers []string, path string) error {
	ctx := c.Context()
	format, err := o.reportFormat(env)
	if err != nil {
		return err
	}
	chosen, err := crawler.Resolve(crawlers)
	if err != nil {
		return err
	}
	rep, err := emitReadReport(ctx, env, path)
	if err != nil {
		return err
	}
	names, profiles, err := audit.RecheckCrawlers(rep, chosen, len(crawlers) > 0)
	if err != nil {
		return err
	}
	env.phase(phaseIPList)
	id, err := newIdentityFor(ctx, env, o, profiles)
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		return errInterrupted
	}
	env.phase(phaseDNS)
	rc := &audit.Recheck{Now: env.Now(), Crawlers: names, Classify: id.Classify, Lists: id.Lists}
	first := len(rep.Warnings) // the earlier ones are the first run's, said then
	if _, err := rc.Run(ctx, rep); err != nil {
		if ctx.Err() != nil {
			return errInterrupted
		}
		return err
	}
	rep.Warnings = append(rep.Warnings, id.Warnings()...)
	rep.Version = Version
	env.phase(phaseWrite)
	return writeAuditReport(ctx, env, o, format, reportOptions(env, o), rep, first, nil)
}
