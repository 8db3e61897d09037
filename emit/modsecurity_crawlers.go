package emit

import (
	"bufio"
	"fmt"
	"io"
	"net/netip"
	"strings"
)

// modSecurityCrawlers writes the ModSecurity rules of a Plan for several
// crawlers, crawler by crawler in the Plan's order, each part headed by a
// comment naming it. IDs are deterministic and never collide: in
// block-spoofed mode crawler i's token rule has ID base+i, whatever the
// number of addresses, and the address rules follow from
// base+len(crawlers) on, crawler by crawler; in the other modes the
// address rules take consecutive IDs from base.
func modSecurityCrawlers(w io.Writer, in Input, base int, p *Plan) error {
	type part struct {
		c      *CrawlerPlan
		chunks [][]netip.Prefix
	}
	if p.Mode == BlockSpoofed {
		if err := needTokens(p.Crawlers); err != nil {
			return err
		}
	}
	parts := make([]part, len(p.Crawlers))
	n := 0
	for i := range p.Crawlers {
		c := &p.Crawlers[i]
		if p.Mode == BlockSpoofed && len(c.Exempt) == 0 {
			return fmt.Errorf("%w: %s has no genuine address and an empty IP list: a rule denying its tokens to every other address would deny the crawler itself", ErrNoCrawlerAddresses, c.Name)
		}
		parts[i] = part{c, chunkPrefixes(c.crawlerSet(p.Mode), ModSecChunk)}
		n += len(parts[i].chunks)
		if p.Mode == BlockSpoofed {
			n++
		}
	}
	if n == 0 {
		return fmt.Errorf("%w: no crawler address left to match", ErrNoCrawlerAddresses)
	}
	if base > ModSecMaxID-n+1 {
		return fmt.Errorf("%w: modsecurity rule id base %d leaves no room for %d rules", ErrBadOption, base, n)
	}
	last := base + n - 1

	who := p.who("and")
	set := p.crawlerSet()
	var what string
	switch p.Mode {
	case BlockSpoofed:
		what = fmt.Sprintf("This file denies each crawler's User-Agent tokens (%s) from addresses that are not that crawler's, and all requests from %s seen spoofing one.", who, plural(len(set), "address", "addresses"))
	case BlockBot:
		what = fmt.Sprintf("This file denies all requests from the %s %s.", p.whose(), plural(len(set), "address", "addresses"))
	case AllowBot:
		what = fmt.Sprintf("This file lets the %s %s past every later rule: include it before other rules.", p.whose(), plural(len(set), "address", "addresses"))
	}
	note := ""
	if p.Mode == BlockSpoofed {
		note = fmt.Sprintf(" (token rules %d to %d, one per crawler in order)", base, base+len(parts)-1)
	}
	bw := bufio.NewWriter(w)
	msHeader(bw, in, p.Mode, what, "IP lists", base, last, note)

	id := base
	if p.Mode == BlockSpoofed {
		id = base + len(parts)
	}
	for i, pt := range parts {
		c := pt.c
		tag := "tag:" + msQuote("lohibot-audit") + ",tag:" + msQuote("lohibot-audit/"+string(p.Mode)) + ",tag:" + msQuote("lohibot-audit/crawler/"+c.Name)
		bw.WriteString("\n")
		bw.WriteString(hashComment(fmt.Sprintf("%s (User-Agent %s): %s", c.Name, strings.Join(c.Tokens, ", "), plural(len(c.crawlerSet(p.Mode)), "address", "addresses"))))
		ipRules := func(msg, action, actions string) {
			for _, ch := range pt.chunks {
				fmt.Fprintf(bw, "SecRule REMOTE_ADDR %s \"id:%d,phase:1,%s,log,t:none%s,msg:%s,%s\"\n",
					msOperator("@ipMatch", msIPList(ch)), id, action, actions, msg, tag)
				id++
			}
		}
		switch p.Mode {
		case BlockSpoofed:
			op := msOperator("@contains", c.Tokens[0])
			if len(c.Tokens) > 1 {
				op = msOperator("@pm", strings.Join(c.Tokens, " "))
			}
			msg := msQuote(fmt.Sprintf("lohibot-audit: User-Agent claims %s from an address that is not the crawler", c.Name))
			exempt := chunkPrefixes(c.Exempt, ModSecChunk)
			fmt.Fprintf(bw, "SecRule REQUEST_HEADERS:User-Agent %s \"id:%d,phase:1,deny,status:403,log,t:none,t:lowercase,msg:%s,%s,chain\"\n",
				op, base+i, msg, tag)
			for j, ch := range exempt {
				chain := ""
				if j < len(exempt)-1 {
					chain = ",chain"
				}
				fmt.Fprintf(bw, "    SecRule REMOTE_ADDR %s \"t:none%s\"\n", msOperator("!@ipMatch", msIPList(ch)), chain)
			}
			ipRules(msQuote(fmt.Sprintf("lohibot-audit: address seen claiming to be %s without being it", c.Name)), "deny,status:403", "")
		case BlockBot:
			ipRules(msQuote(fmt.Sprintf("lohibot-audit: %s crawler address", c.Name)), "deny,status:403", "")
		case AllowBot:
			ipRules(msQuote(fmt.Sprintf("lohibot-audit: %s crawler address, later rules skipped", c.Name)), "pass", ",ctl:ruleEngine=Off")
		}
	}
	return bw.Flush()
}
