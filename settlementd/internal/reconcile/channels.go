package reconcile

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
)

// channelsSQL: every x402 batch-settlement channel's newest state as the
// gateway's ChannelState events recorded it (migration 0072), with the
// deposit transactions its balance was raised by.
const channelsSQL = `
SELECT c.channel_id, c.seq, c.wallet, c.balance, c.claimed, c.charged, c.signed, c.signature, c.config, c.closed,
       COALESCE((SELECT array_agg(d.tx_hash ORDER BY d.tx_hash) FROM x402_channel_deposits d WHERE d.channel_id = c.channel_id), '{}')
FROM x402_channels c
ORDER BY c.channel_id`

// channelScript writes a batch-settlement channel's hash from PostgreSQL
// unless Redis holds it at the same or a newer change (seq): the gateway
// drew from it since, or this run raced another one. A channel the gateway
// lost comes back exactly as it was last recorded: the charged total and
// the latest voucher's amount and signature (what the claims and a
// cooperative refund pay the receiver from), the on-chain balance and
// totalClaimed last known, the config, whether a refund closed it, and its
// deposit transactions (so a retried old deposit is not applied again).
// The seq carries over, so the states the gateway emits from here on are
// newer than the one PostgreSQL holds.
//
// KEYS: 1 channel hash, 2 its deposits set, 3 channels set.
// ARGV: 1 seq, 2 w, 3 bal, 4 claimed, 5 charged, 6 signed, 7 sig, 8 cfg,
// 9 closed (1/0), 10 channel id, 11… deposit tx hashes.
// Reply: 1 written, 0 left alone.
var channelScript = redis.NewScript(`
if tonumber(redis.call('HGET', KEYS[1], 'seq') or '0') >= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'w', ARGV[2], 'bal', ARGV[3], 'claimed', ARGV[4], 'charged', ARGV[5], 'signed', ARGV[6],
  'cfg', ARGV[8], 'seq', ARGV[1])
if ARGV[7] == '' then redis.call('HDEL', KEYS[1], 'sig') else redis.call('HSET', KEYS[1], 'sig', ARGV[7]) end
if ARGV[9] == '1' then redis.call('HSET', KEYS[1], 'closed', '1') else redis.call('HDEL', KEYS[1], 'closed') end
for i = 11, #ARGV do redis.call('SADD', KEYS[2], ARGV[i]) end
redis.call('SADD', KEYS[3], ARGV[10])
return 1`)

// channels restores every batch-settlement channel's hash (an applied run
// only; a dry run counts them). It runs before the generation marker is
// set: until then the gateway answers vouchers "recovering", never
// "missing channel" (which sends the client to a new deposit that would
// reset what it was charged).
func (w *writer) channels(ctx context.Context, pool *pgxpool.Pool, apply bool) error {
	rows, err := pool.Query(ctx, channelsSQL)
	if err != nil {
		return fmt.Errorf("reconcile: reading x402 channels: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id, wallet, sig, cfg               string
			seq, bal, claimed, charged, signed int64
			closed                             bool
			txs                                []string
		)
		if err := rows.Scan(&id, &seq, &wallet, &bal, &claimed, &charged, &signed, &sig, &cfg, &closed, &txs); err != nil {
			return fmt.Errorf("reconcile: %w", err)
		}
		w.rep.Channels++
		if !apply {
			continue
		}
		sh := w.l.Shard(w.l.ShardOfPayer(id))
		c := "0"
		if closed {
			c = "1"
		}
		args := []any{seq, wallet, bal, claimed, charged, signed, sig, cfg, c, id}
		for _, tx := range txs {
			args = append(args, tx)
		}
		n, err := channelScript.Run(ctx, w.rdb, []string{sh.Channel(id), sh.ChannelDeposits(id), sh.Channels()}, args...).Int()
		if err != nil {
			return fmt.Errorf("reconcile: writing x402 channel %s: %w", id, err)
		}
		if n == 1 {
			w.rep.ChannelsWritten++
			w.log.Debug("x402 channel restored", zap.String("channel", id), zap.String("charged", strconv.FormatInt(charged, 10)))
		}
	}
	return rows.Err()
}
