package chainjobs

import (
	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/chain"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/jobs"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/leader"
)

// The daemon's parts plug in as they are: the elector fences, its Redis
// client runs scripts, and every built job is a jobs.Job.
var (
	_ chain.Fencer   = (*leader.Elector)(nil)
	_ redis.Scripter = (redis.UniversalClient)(nil)
	_ jobs.Job       = Scheduled{}.Job
)
