package meter

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// What a master failover may lose (docs/decisions.md, "Metering on a Redis
// Cluster: failover"). Redis replicates asynchronously: a master answers a
// script before its replica has the writes. If the master dies in that
// window and its replica is promoted, the script's writes are gone: for a
// paid call, the debit and its Debit event. The caller was served and keeps
// the credits (or bundle calls): the loss is the operator's, never a second
// charge, because nothing is replayed (retries are off; a lost reply is
// 503, and VoidIfBooked only ever refunds).
//
// Config.ReplicaWait bounds it: every script that may book money is
// followed, on the same connection and in the same pipeline (so still one
// round trip, longer by the replica's acknowledgement), by WAIT 1 <ReplicaWait>.
// A decision whose WAIT saw no replica acknowledge in time is still served
// (a slow replica must not stop the service) but counted
// (Meter.Unreplicated, the tollgate_meter_unreplicated_total metric): only
// those can be lost in a failover, so the counter is the bound, and a
// failover with it at zero since the last check lost nothing.

// execWait runs r on its master with WAIT 1 after it.
func (m *Meter) execWait(ctx context.Context, r *run) {
	node, err := m.nodeFor(ctx, r.keys[0])
	if err != nil {
		r.cmd = redis.NewCmd(ctx)
		r.cmd.SetErr(err)
		return
	}
	var ack *redis.Cmd
	ms := max(m.cfg.ReplicaWait.Milliseconds(), 1)
	_, _ = node.Pipelined(ctx, func(p redis.Pipeliner) error {
		r.cmd = r.script.EvalSha(ctx, p, r.keys, r.args...)
		ack = p.Do(ctx, "WAIT", 1, ms)
		return nil
	})
	if err := r.cmd.Err(); err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		r.cmd = r.script.Run(ctx, node, r.keys, r.args...)
		ack = node.Do(ctx, "WAIT", 1, ms)
	}
	if err := r.cmd.Err(); err != nil {
		m.staleRoute(err)
		return
	}
	if n, err := ack.Int64(); err != nil || n < 1 {
		m.unreplicated.Add(1)
		if m.cfg.OnUnreplicated != nil {
			m.cfg.OnUnreplicated()
		}
	}
}

// nodeFor is the connection pool of the master holding key: the
// ClusterClient's node, or the one client.
func (m *Meter) nodeFor(ctx context.Context, key string) (redis.UniversalClient, error) {
	if cc := asCluster(m.uc); cc != nil {
		return cc.MasterForKey(ctx, key)
	}
	return m.uc, nil
}

// staleRoute refreshes the ClusterClient's slot map after an answer that
// says a slot moved (a failover promoted a replica): a run sent straight
// to a node does not follow redirects itself.
func (m *Meter) staleRoute(err error) {
	if cc := asCluster(m.uc); cc != nil && Redirected(err) {
		go cc.ReloadState(context.Background())
	}
}

// Unreplicated counts decisions that may book money whose WAIT saw no
// replica acknowledge within ReplicaWait: what a failover can lose.
func (m *Meter) Unreplicated() uint64 { return m.unreplicated.Load() }
