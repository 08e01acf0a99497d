package meter

import (
	"context"
	"errors"
	"fmt"
	"net/netip"

	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/shared/balances"
)

// FreeLeft reads, without booking anything, the free calls an address has
// left today: the smaller of what its own (IPv6: /64) allowance and its
// network's (/24, IPv6 /48) allowance leave, under the limits in force.
// It is what the next free decision would start from; another request may
// draw from it before this one does.
func (m *Meter) FreeLeft(ctx context.Context, ip netip.Addr) (left int64, lim FreeLimits, err error) {
	ipKey, netKey := Subjects(ip)
	date := m.date(m.cfg.Now())
	var ipUsed, netUsed *redis.StringCmd
	var lims *redis.SliceCmd
	_, err = m.cmd.Pipelined(ctx, func(p redis.Pipeliner) error {
		ipUsed = p.Get(ctx, m.layout.FreeIP(date, ipKey))
		netUsed = p.Get(ctx, m.layout.FreeNet(date, netKey))
		lims = p.HMGet(ctx, m.layout.FreeConfig(), balances.FreeConfigIP, balances.FreeConfigNet)
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return 0, FreeLimits{}, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	lim, _ = m.mergeLimits(lims.Val())
	used := func(c *redis.StringCmd) int64 { n, _ := c.Int64(); return n } // absent: nothing used
	left = max(0, min(lim.DailyPerIP-used(ipUsed), lim.Subnet-used(netUsed)))
	return left, lim, nil
}
