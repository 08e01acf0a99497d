package meter

import (
	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/shared/events"
)

// The scripts run with EVALSHA and are loaded with EVAL on NOSCRIPT
// (redis.Script.Run). Each is one atomic step in Redis, so no interleaving of
// concurrent requests can spend a balance twice or overrun a free counter.
//
// Times come from the gateway (ARGV), not from Redis TIME: tests can move
// the clock, and the UTC date that names the day's counters is the same one
// the gateway reports. Gateways are NTP-synchronised anyway (event times and
// epochs depend on it); a few milliseconds of skew between instances shift a
// GCRA decision by as much and nothing else.

// gcraLua is the GCRA request-rate check the scripts share (as
// go-redis/redis_rate, in integer-ish milliseconds). gcra checks without
// writing, so a request refused by a later check consumes nothing; commit
// stores the new state once the request goes through. An interval of 0
// means no limit.
const gcraLua = `
local function gcra(now, key, interval, burst)
  if interval <= 0 then return 0, nil end
  local tat = tonumber(redis.call('GET', key)) or now
  if tat < now then tat = now end
  local new = tat + interval
  local wait = new - interval * burst - now
  if wait > 0 then return wait, nil end
  return 0, new
end
local function commit(now, key, new)
  if new then redis.call('SET', key, new, 'PX', math.max(1, math.ceil(new - now))) end
end
`

// seqLua defines advance(p, floor) on the shard whose key prefix is p (the
// state counter balances.Layout.Seq is p..'seq', the generation marker
// p..'generation', in the slot of every key of the shard): every metering
// decision, SIWX draw, voucher draw and x402 grant counts one. shardOf(key,
// suffix) is the prefix of a shard key the script was given. The gateway
// sends floor: the highest count settlementd has acknowledged as stored in
// PostgreSQL (Retention.Floor, from balances.Layout.Ingested), so a Redis
// holding a lower count is older than the ledger — restored from a snapshot
// or an older RDB/AOF, or a replica that missed acknowledged writes. That
// Redis serves no money: the first script to find it so sets the count to
// -1 and deletes the generation marker, and every script answers
// "recovering" until settlementd has wiped and rebuilt the shard from
// PostgreSQL (package recovery). A missing count (an empty Redis) starts at
// Redis's clock in microseconds, above any floor a gateway holds unless the
// shard made more than a million decisions a second. No round trip is
// added: the floor rides the script's arguments.
// Reply: 0 go on, 1 found older earlier (awaiting the rebuild), 2 found
// older now.
const seqLua = `
local function shardOf(key, suffix) return string.sub(key, 1, #key - #suffix) end
local function advance(p, floor)
  local k, gen = p .. 'seq', p .. 'generation'
  local s = tonumber(redis.call('GET', k) or '0')
  if s < 0 then return 1 end
  if s == 0 then
    -- No count, yet the shard is built (its marker is there) and a floor
    -- is known: a snapshot from before the count existed. settlementd
    -- gives every shard its count before it sets the marker.
    if floor > 0 and redis.call('EXISTS', gen) == 1 then
      redis.call('SET', k, '-1')
      redis.call('DEL', gen)
      return 2
    end
    local t = redis.call('TIME')
    local init = math.max(tonumber(t[1]) * 1000000 + tonumber(t[2]), floor + 1)
    redis.call('SET', k, string.format('%d', init))
    return 0
  end
  if s < floor then
    redis.call('SET', k, '-1')
    redis.call('DEL', gen)
    return 2
  end
  redis.call('INCR', k)
  return 0
end
`

// bundleLua defines drawBundle(stream, bundle, today, n, ttl, t, v, d): n
// calls leave the wallet's bundle hash (calls down, used up), count
// against the requests of the day (the key expiring ttl s after its first
// count) and are recorded as the debit event (type t, version v, payload
// d). It returns the calls left and the debit's stream id. The scripts
// that draw (siwxScript, siwxSessionScript, grantScript) check first.
const bundleLua = `
local function drawBundle(stream, bundle, today, n, ttl, t, v, d)
  local left = redis.call('HINCRBY', bundle, 'calls', -n)
  redis.call('HINCRBY', bundle, 'used', n)
  if redis.call('INCRBY', today, n) == n then redis.call('EXPIRE', today, ttl) end
  return left, redis.call('XADD', stream, '*', 't', t, 'v', v, 'd', d)
end
`

// meterScript decides who pays for one request (all calls of a batch at
// once) and books it. Outcomes, as the first element of the reply:
//
//	1 paid by credits      {1, balance after, account, debit's stream id}
//	2 free tier            {2, free calls left for the IP today, account or "", IP limit, subnet limit, debit's stream id}
//	3 payment required     {3, 1 = IP allowance exhausted | 2 = subnet cap reached, account or "", IP limit, subnet limit}
//	4 rate limited         {4, retry after ms}
//	5 unauthorized key     {5, 1 = unknown | 2 = revoked}
//	6 paid by an x402 bundle {6, bundle calls left, account, wallet, debit's stream id} (a bundle key)
//	8 recovering             {8, 0}: the key is unknown, or its bundle is missing,
//	                         and Redis has no generation marker (it lost its data
//	                         and settlementd has not rebuilt it yet)
//	9 no funds               {9, account} (mode "payer"): the key is valid, its
//	                         rate allows the request, but neither bundle nor
//	                         credits cover it; the free tier is on the address's shard
//	8 (older)                {8, 1 | 2}: this shard's Redis is older than the
//	                         ledger (seqLua: 2 found so by this call)
//	10 elsewhere             {10, shard}: the key's lookup here points to the
//	                         account's home shard (an account migrated from an
//	                         unsharded layout; balances.KeyPointer)
//
// It runs on one shard, in one of three modes (ARGV[22]), by which of the
// request's keys that shard holds (balances/shard.go):
//
//	all    the payer (if a key was sent) and the address are on this shard:
//	       the whole decision, as on an unsharded deployment
//	payer  only the payer is: key, key rate, bundle or credits; a bad key is
//	       answered without the address's rate (the gateway asks the
//	       address's shard, gateScript), no funds is {9, account}
//	ip     only the address is: its rate (ARGV[24] = 1, a caller without a
//	       valid key) and the free tier, booked with the account the gateway
//	       names in the free payload (ARGV[17], no placeholder)
//
// KEYS: 1 stream, 2 requests today, 3 generation marker (read only when a
// key looks unknown), then [4 key lookup — modes all and payer, when a key
// was sent], then the address's keys from index ARGV[23] (0 = none): IP
// rate, free IP counter, free subnet counter, free stats, runtime free-tier
// limits (an operator's override, read only when the request reaches the
// free tier, so the one round trip stays one).
// The account's own keys are derived from the looked-up id (ARGV[1] is this
// shard's account key prefix): they cannot be named before the lookup, and
// they carry the shard's hash tag like every other key here.
//
// ARGV: 1 account prefix, 2 now ms, 3 calls, 4 price per call, 5 IP daily
// limit, 6 subnet daily limit (both from the configuration: used for a field
// the runtime limits do not hold), 7 near-limit percent, 8 daily key TTL s,
// 9 IP emission interval ms (0 = no limit), 10 IP burst, 11 key emission
// interval ms, 12 key burst, 13 UTC date, 14 event type, 15 event version,
// 16 debit payload (credits), 17 debit payload (free), 18 account placeholder,
// 19 bundle key prefix, 20 debit payload (bundle; "" = a bundle key may not
// draw here), 21 wallet placeholder, 22 mode, 23 index of the first address
// key (0 = none), 24 "1" = check the address's rate in mode ip, 25 "1" =
// count a call short of funds in the key's calls of the day (mode payer),
// 26 the shard's ledger floor (seqLua).
//
// A bundle key (an X-Tollgate-Bundle-Key; its account hash holds w = the
// wallet) draws on the wallet's bundle instead of credits; it has no credit
// balance, so with no bundle calls left it falls through to the free tier
// like any key without credits. Its account lives on its wallet's shard.
var meterScript = redis.NewScript(gcraLua + seqLua + `
local older = advance(shardOf(KEYS[3], 'generation'), tonumber(ARGV[26]) or 0)
if older > 0 then return {8, older} end
local now = tonumber(ARGV[2])
local n = tonumber(ARGV[3])
local ttl = tonumber(ARGV[8])
local mode = ARGV[22]
local ipk = tonumber(ARGV[23])

local id, acct = false, false
local function count(key, by)
  if redis.call('INCRBY', key, by) == by then redis.call('EXPIRE', key, ttl) end
end
local function subst(payload, ph, v)
  local s, e = string.find(payload, ph, 1, true)
  if s then payload = string.sub(payload, 1, s - 1) .. v .. string.sub(payload, e + 1) end
  return payload
end
local function book(payload)
  if id then
    -- The debit payloads are encoded (and validated) by the gateway, with a
    -- placeholder where the account id goes: the id is only known here.
    payload = subst(payload, ARGV[18], id)
    count(acct .. ':day:' .. ARGV[13], n)
  end
  count(KEYS[2], n)
  -- The entry's id goes back to the gateway, which keeps the fact until
  -- settlementd has stored it (retain.go).
  return redis.call('XADD', KEYS[1], '*', 't', ARGV[14], 'v', ARGV[15], 'd', payload)
end

-- recovering: Redis lost its data (no generation marker), so a key that
-- looks unknown may be a valid key settlementd has not rebuilt yet.
local function recovering() return redis.call('EXISTS', KEYS[3]) == 0 end

if mode ~= 'ip' and #KEYS >= 4 and (ipk == 0 or ipk > 4) then
  id = redis.call('GET', KEYS[4])
  if id and string.sub(id, 1, 1) == '@' then return {10, tonumber(string.sub(id, 2))} end
  -- The account's state, wallet and balance in one read: two redis.calls
  -- fewer per paid call (~0.65 µs of Redis each, redis-benchmark).
  local st, w, bal = false, false, 0
  if id then
    acct = ARGV[1] .. id .. '}'
    local f = redis.call('HMGET', acct, 'st', 'w', 'bal')
    st, w, bal = f[1], f[2], tonumber(f[3] or '0')
  end
  if st ~= 'active' then
    -- A bad key is charged to the caller's IP rate, so guessing keys is
    -- throttled like any anonymous traffic (mode payer: by the gateway, on
    -- the address's shard).
    if ipk > 0 then
      local wait, new = gcra(now, KEYS[ipk], tonumber(ARGV[9]), tonumber(ARGV[10]))
      if wait > 0 then return {4, math.ceil(wait)} end
      commit(now, KEYS[ipk], new)
    end
    if st then return {5, 2} end
    if recovering() then return {8, 0} end
    return {5, 1}
  end
  -- A bundle key whose bundle is missing after a loss would otherwise fall
  -- through to the free tier (or a 402) for calls it has paid for.
  local b = false
  if w and ARGV[20] ~= '' then
    b = ARGV[19] .. w .. '}'
    if redis.call('EXISTS', b) == 0 and recovering() then return {8, 0} end
  end
  local rl = acct .. ':rl'
  local wait, new = gcra(now, rl, tonumber(ARGV[11]), tonumber(ARGV[12]))
  if wait > 0 then return {4, math.ceil(wait)} end
  commit(now, rl, new)
  if b then
    local left = tonumber(redis.call('HGET', b, 'calls') or '0')
    if left >= n then
      left = redis.call('HINCRBY', b, 'calls', -n)
      redis.call('HINCRBY', b, 'used', n)
      local xid = book(subst(ARGV[20], ARGV[21], w))
      return {6, left, id, w, xid}
    end
  end
  local cost = n * tonumber(ARGV[4])
  if cost > 0 and bal >= cost then
    bal = redis.call('HINCRBY', acct, 'bal', -cost)
    redis.call('HINCRBY', acct, 'spent', cost)
    local xid = book(ARGV[16])
    return {1, bal, id, xid}
  end
  if ipk == 0 then
    -- The free tier on the address's shard is expected to serve the call:
    -- it counts in the key's calls of the day (the gateway takes it back
    -- when the free tier refuses, ARGV[25] = 1).
    if ARGV[25] == '1' then count(acct .. ':day:' .. ARGV[13], n) end
    return {9, id}
  end
elseif mode ~= 'ip' or ARGV[24] == '1' then
  local wait, new = gcra(now, KEYS[ipk], tonumber(ARGV[9]), tonumber(ARGV[10]))
  if wait > 0 then return {4, math.ceil(wait)} end
  commit(now, KEYS[ipk], new)
end

-- Free tier: the whole request fits in both allowances, or none of it runs.
-- An operator's runtime limits win over the configured ones, field by field.
local kip, knet, kstats = KEYS[ipk + 1], KEYS[ipk + 2], KEYS[ipk + 3]
local lims = redis.call('HMGET', KEYS[ipk + 4], 'ip', 'net')
local iplim = tonumber(lims[1]) or tonumber(ARGV[5])
local netlim = tonumber(lims[2]) or tonumber(ARGV[6])
local near = 1
if iplim > 0 then near = math.floor((iplim * tonumber(ARGV[7]) + 99) / 100) end
local used = redis.call('MGET', kip, knet)
local ipu = tonumber(used[1] or '0')
if ipu + n > iplim then return {3, 1, id or '', iplim, netlim} end
local netu = tonumber(used[2] or '0')
if netu + n > netlim then return {3, 2, id or '', iplim, netlim} end
count(kip, n)
count(knet, n)
if redis.call('HINCRBY', kstats, 'calls', n) == n then redis.call('EXPIRE', kstats, ttl) end
if ipu == 0 then redis.call('HINCRBY', kstats, 'ips', 1) end
if ipu < near and ipu + n >= near then redis.call('HINCRBY', kstats, 'near', 1) end
local xid = book(ARGV[17])
return {2, iplim - ipu - n, id or '', iplim, netlim, xid}
`)

// refundScript gives back what a request was charged for calls the upstream
// failed, once per request (the guard key), and records the Refund event.
//
// KEYS: 1 stream, 2 guard, then either 3 account hash (credits), 3 the
// wallet's bundle hash (bundle), or 3 free IP counter, 4 free subnet
// counter, 5 free stats (free tier).
// ARGV: 1 "credits" | "bundle" | "free", 2 units, 3 calls, 4 event type, 5 event
// version, 6 refund payload, 7 near-limit threshold, 8 guard TTL s.
// Reply: the Refund's stream id, or 0 when the request was refunded before.
var refundScript = redis.NewScript(`
if not redis.call('SET', KEYS[2], '1', 'NX', 'EX', ARGV[8]) then return 0 end
local k = tonumber(ARGV[3])
if ARGV[1] == 'credits' then
  local units = tonumber(ARGV[2])
  redis.call('HINCRBY', KEYS[3], 'bal', units)
  redis.call('HINCRBY', KEYS[3], 'spent', -units)
elseif ARGV[1] == 'bundle' then
  redis.call('HINCRBY', KEYS[3], 'calls', k)
  redis.call('HINCRBY', KEYS[3], 'used', -k)
else
  -- Counters that expired meanwhile (a refund across UTC midnight) stay gone.
  local ipu = tonumber(redis.call('GET', KEYS[3]) or '0')
  local give = math.min(k, ipu)
  if give > 0 then
    redis.call('DECRBY', KEYS[3], give)
    local netu = tonumber(redis.call('GET', KEYS[4]) or '0')
    if netu > 0 then redis.call('DECRBY', KEYS[4], math.min(give, netu)) end
    if redis.call('EXISTS', KEYS[5]) == 1 then
      redis.call('HINCRBY', KEYS[5], 'calls', -give)
      local near = tonumber(ARGV[7])
      if ipu >= near and ipu - give < near then redis.call('HINCRBY', KEYS[5], 'near', -1) end
      if ipu - give == 0 then redis.call('HINCRBY', KEYS[5], 'ips', -1) end
    end
  end
end
return redis.call('XADD', KEYS[1], '*', 't', ARGV[4], 'v', ARGV[5], 'd', ARGV[6])
`)

// createLimitScript records a key creation against the creation limit of
// the caller's IP (an exact sliding window, so "10 per hour" is never 20
// across a boundary), on the address's shard.
//
// KEYS: 1 creation log of the IP. ARGV: 1 now ms, 2 window ms, 3 max per
// window, 4 member (the new account id).
// Reply: {1, 0} recorded, {0, retry after ms} limited.
var createLimitScript = redis.NewScript(`
local now, window, max = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) >= max then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {0, math.max(1, tonumber(oldest[2]) + window - now)}
end
redis.call('ZADD', KEYS[1], now, ARGV[4])
redis.call('PEXPIRE', KEYS[1], window)
return {1, 0}
`)

// createScript creates an API key on its account's shard: the lookup from
// the key's hash, the account record and the KeyCreated event, all or
// nothing (the creation limit was recorded before, createLimitScript).
//
// KEYS: 1 key lookup, 2 account hash, 3 stream.
// ARGV: 1 now ms, 2 account id, 3 tier, 4 kind, 5 label, 6 event type,
// 7 event version, 8 payload.
// Reply: {1, 0} created, {-1, 0} hash collision.
var createScript = redis.NewScript(`
if not redis.call('SET', KEYS[1], ARGV[2], 'NX') then return {-1, 0} end
redis.call('HSET', KEYS[2], 'st', 'active', 'tier', ARGV[3], 'kind', ARGV[4], 'label', ARGV[5], 'ts', ARGV[1])
redis.call('XADD', KEYS[3], '*', 't', ARGV[6], 'v', ARGV[7], 'd', ARGV[8])
return {1, 0}
`)

// usageScript reads what GET /api/keys/usage and the key → account lookups
// need in one round trip.
//
// KEYS: 1 key lookup, 2 runtime free-tier limits, 3 generation marker.
// ARGV: 1 account prefix, 2 UTC date.
// Reply: {0} unknown, {2} revoked, {3} unknown while Redis is not rebuilt
// (no generation marker), {4, shard} the lookup points to the account's
// home shard (balances.KeyPointer), {1, id, tier, bal, spent, calls today,
// runtime IP limit or "", the bundle key's wallet or ""}.
var usageScript = redis.NewScript(`
local function unknown()
  if redis.call('EXISTS', KEYS[3]) == 0 then return {3} end
  return {0}
end
local id = redis.call('GET', KEYS[1])
if not id then return unknown() end
if string.sub(id, 1, 1) == '@' then return {4, tonumber(string.sub(id, 2))} end
local acct = ARGV[1] .. id .. '}'
local f = redis.call('HMGET', acct, 'st', 'tier', 'bal', 'spent', 'w')
if f[1] ~= 'active' then
  if f[1] then return {2} end
  return unknown()
end
local day = redis.call('GET', acct .. ':day:' .. ARGV[2])
local lim = redis.call('HGET', KEYS[2], 'ip')
return {1, id, f[2] or 'free', f[3] or '0', f[4] or '0', day or '0', lim or '', f[5] or ''}
`)

// siwxScript serves a request from a wallet's x402 bundle for a verified
// Sign-In-With-X message, on the wallet's shard: the message's nonce unused
// (it becomes used only when the request is served, as the x402 reference
// server records it), the bundle covering every call of the request. The
// caller's IP rate is checked by gateScript on the address's shard in the
// same round trip (shard.go).
//
// KEYS: 1 stream, 2 bundle hash, 3 nonce key, 4 requests today,
// 5 generation marker.
// ARGV: 1 calls, 2 nonce TTL s, 3 event type, 4 event version, 5 debit
// payload, 6 daily key TTL s, 7 the shard's ledger floor (seqLua).
// Reply: {1, calls left, debit's stream id} served, {3, calls left} too few calls left,
// {7, 0} nonce already used, {8, 0} the bundle is missing and Redis is not
// rebuilt yet (the nonce stays unused, so the same message works once it is),
// {8, 1 | 2} this Redis is older than the ledger (seqLua).
var siwxScript = redis.NewScript(seqLua + bundleLua + `
local older = advance(shardOf(KEYS[5], 'generation'), tonumber(ARGV[7]) or 0)
if older > 0 then return {8, older} end
local n = tonumber(ARGV[1])
if redis.call('EXISTS', KEYS[2]) == 0 and redis.call('EXISTS', KEYS[5]) == 0 then return {8, 0} end
if redis.call('EXISTS', KEYS[3]) == 1 then return {7, 0} end
local left = tonumber(redis.call('HGET', KEYS[2], 'calls') or '0')
if left < n then return {3, left} end
redis.call('SET', KEYS[3], '1', 'EX', ARGV[2])
local after, xid = drawBundle(KEYS[1], KEYS[2], KEYS[4], n, ARGV[6], ARGV[3], ARGV[4], ARGV[5])
return {1, after, xid}
`)

// siwxSessionScript draws a request's calls from a wallet's x402 bundle for
// a connection signed in with Sign-In-With-X for its life (a WebSocket;
// Meter.SignInSIWX, Meter.DrawSignedIn), on the wallet's shard, with the
// address's rate checked by gateScript in the same round trip. The first
// draw carries the message's nonce (KEYS[5]): unused, or marked by this
// same connection (ARGV[7], its random session id: a first draw whose
// reply was lost), and marked with the session id when the draw is served;
// marked by anyone else (a POST's "1", an x402 reuse, another connection)
// it refuses as siwxScript does. The later draws carry no nonce key: the
// connection proved the wallet with its first.
//
// A first draw also needs the shard to remember every nonce a message
// still young enough could have used: without the generation marker (Redis
// lost its data, not rebuilt yet) it is {8, 0} whatever the bundle, and a
// message issued (ARGV[8], UTC to the second) before or in the second the
// marker names (balances.GenerationValue: the rebuild's) is {7, 0}, as
// used: the loss forgot whether it was. A marker without a leading time (a
// test's stand-in for settlementd) refuses none.
//
// KEYS: 1 stream, 2 bundle hash, 3 requests today, 4 generation marker,
// 5 nonce key (the first draw only).
// ARGV: 1 calls, 2 event type, 3 event version, 4 debit payload, 5 daily
// key TTL s, 6 session id ("" without a nonce), 7 nonce TTL s, 8 the
// message's issuedAt ("2006-01-02T15:04:05" UTC; "" without a nonce),
// 9 the shard's ledger floor (seqLua).
// Reply: siwxScript's.
var siwxSessionScript = redis.NewScript(seqLua + bundleLua + `
local older = advance(shardOf(KEYS[4], 'generation'), tonumber(ARGV[9]) or 0)
if older > 0 then return {8, older} end
local n = tonumber(ARGV[1])
local nonce = KEYS[5]
if nonce then
  local gen = redis.call('GET', KEYS[4])
  if not gen then return {8, 0} end
  local rebuilt = string.match(gen, '^%d%d%d%d%-%d%d%-%d%dT%d%d:%d%d:%d%d')
  if rebuilt and ARGV[8] <= rebuilt then return {7, 0} end
  local by = redis.call('GET', nonce)
  if by and by ~= ARGV[6] then return {7, 0} end
elseif redis.call('EXISTS', KEYS[2]) == 0 and redis.call('EXISTS', KEYS[4]) == 0 then
  return {8, 0}
end
local left = tonumber(redis.call('HGET', KEYS[2], 'calls') or '0')
if left < n then return {3, left} end
if nonce then redis.call('SET', nonce, ARGV[6], 'EX', ARGV[7]) end
local after, xid = drawBundle(KEYS[1], KEYS[2], KEYS[3], n, ARGV[5], ARGV[2], ARGV[3], ARGV[4])
return {1, after, xid}
`)

// grantScript books a settled x402 payment: the wallet's bundle grows by the
// bundle's calls once per settlement transaction (the grants set), a bundle
// key drawing on it is created, the BundleGranted and KeyCreated events are
// recorded, and the paying request's calls are drawn — all or nothing. A
// transaction already granted grants nothing again and only draws.
//
// KEYS: 1 stream, 2 bundle hash, 3 grants set, 4 key lookup, 5 bundle key's
// account hash, 6 requests today.
// ARGV: 1 tx hash, 2 calls granted, 3 calls drawn, 4 now ms, 5 key id,
// 6 key label, 7 wallet, 8 event version, 9 bundle_granted type, 10 its
// payload, 11 key_created type, 12 its payload, 13 debit type, 14 its
// payload, 15 daily key TTL s, 16 the shard's ledger floor (seqLua).
// Reply: {8, 1 | 2} this Redis is older than the ledger (nothing granted: a
// grant checked against a past grants set could grant a transaction twice;
// the payment is retried once the shard is rebuilt), otherwise {1, calls left, granted 0|1, grant's entry id, key's, debit's}
// served, {3, calls left, granted 0|1, grant's entry id, key's, ""} too few
// calls left (entry ids "" when not written by this call), {5, calls left} the transaction was granted to an
// earlier request (a replayed payment: nothing drawn), {-1} the key's hash
// is taken (a fresh key is tried).
//
// A retry of this same request (its reply was lost) finds the transaction
// granted with its own key: that attempt applied everything atomically,
// the draw included, so it answers {1, calls left, 1} and draws nothing.
var grantScript = redis.NewScript(seqLua + bundleLua + `
local older = advance(shardOf(KEYS[1], 'events'), tonumber(ARGV[16]) or 0)
if older > 0 then return {8, older} end
local n = tonumber(ARGV[3])
local granted, gxid, kxid = 0, '', ''
if redis.call('SISMEMBER', KEYS[3], ARGV[1]) == 1 then
  local left = tonumber(redis.call('HGET', KEYS[2], 'calls') or '0')
  if redis.call('GET', KEYS[4]) == ARGV[5] then return {1, left, 1} end
  return {5, left}
else
  if not redis.call('SET', KEYS[4], ARGV[5], 'NX') then return {-1} end
  redis.call('SADD', KEYS[3], ARGV[1])
  redis.call('HINCRBY', KEYS[2], 'calls', ARGV[2])
  redis.call('HINCRBY', KEYS[2], 'granted', ARGV[2])
  redis.call('HSET', KEYS[5], 'st', 'active', 'tier', 'free', 'kind', 'bundle', 'label', ARGV[6], 'ts', ARGV[4], 'w', ARGV[7])
  gxid = redis.call('XADD', KEYS[1], '*', 't', ARGV[9], 'v', ARGV[8], 'd', ARGV[10])
  kxid = redis.call('XADD', KEYS[1], '*', 't', ARGV[11], 'v', ARGV[8], 'd', ARGV[12])
  granted = 1
end
local left = tonumber(redis.call('HGET', KEYS[2], 'calls') or '0')
if left < n then return {3, left, granted, gxid, kxid, ''} end
local after, dxid = drawBundle(KEYS[1], KEYS[2], KEYS[6], n, ARGV[15], ARGV[13], ARGV[8], ARGV[14])
return {1, after, granted, gxid, kxid, dxid}
`)

// gateScript is the IP rate check of a request that carries an x402
// payment, run before the facilitator is asked: it throttles forged
// payments like any anonymous traffic, and a Redis that is down stops the
// payment before any money moves (the grant after settlement needs it).
// So does a Redis that lost its data and is not rebuilt yet: a grant booked
// then would add to a bundle the rebuild is about to overwrite from
// PostgreSQL, which does not know the grant yet.
//
// KEYS: 1 IP rate, 2 generation marker. ARGV: 1 now ms, 2 emission interval
// ms, 3 burst.
// Reply: {0, 0} go on, {4, retry after ms} rate limited, {8, 0} recovering.
var gateScript = redis.NewScript(gcraLua + `
local now = tonumber(ARGV[1])
local wait, new = gcra(now, KEYS[1], tonumber(ARGV[2]), tonumber(ARGV[3]))
if wait > 0 then return {4, math.ceil(wait)} end
commit(now, KEYS[1], new)
if redis.call('EXISTS', KEYS[2]) == 0 then return {8, 0} end
return {0, 0}
`)

// depositScript records a batch-settlement deposit the facilitator made: the
// channel's known balance and totalClaimed rise to what the chain reported
// (never fall), once per deposit transaction; a channel new to this Redis
// starts charging from the on-chain totalClaimed. A new deposit reopens a
// channel a cooperative refund closed (the official client deposits again
// on the same channel after a full refund).
//
// While the generation marker is missing (Redis lost its data and
// settlementd has not rebuilt the channels yet) nothing is recorded: the
// rebuild would otherwise find a channel reset to the on-chain totalClaimed
// and take it for live state. The deposit is on chain already; the payment
// retried after the rebuild finds the same transaction (the facilitator's
// settle is idempotent) and records it then.
//
// KEYS: 1 channel hash, 2 its deposits set, 3 channels set, 4 the shard's
// stream, 5 generation marker.
// ARGV: 1 tx hash, 2 balance, 3 totalClaimed, 4 wallet, 5 config JSON, 6 channel id,
// 7 now ms.
// Reply: the channel's fields (w, bal, claimed, charged, signed, sig, cfg),
// or the error RECOVERING.
var depositScript = redis.NewScript(channelEmitLua + `
if redis.call('EXISTS', KEYS[5]) == 0 then return redis.error_reply('RECOVERING Redis lost its data and is being rebuilt') end
if redis.call('SADD', KEYS[2], ARGV[1]) == 1 then
  local bal = tonumber(redis.call('HGET', KEYS[1], 'bal') or '0')
  if tonumber(ARGV[2]) > bal then redis.call('HSET', KEYS[1], 'bal', ARGV[2]) end
  local claimed = tonumber(redis.call('HGET', KEYS[1], 'claimed') or '0')
  if tonumber(ARGV[3]) > claimed then redis.call('HSET', KEYS[1], 'claimed', ARGV[3]) end
  local charged = tonumber(redis.call('HGET', KEYS[1], 'charged') or '-1')
  if charged < tonumber(ARGV[3]) then redis.call('HSET', KEYS[1], 'charged', ARGV[3], 'signed', ARGV[3]) end
  redis.call('HSET', KEYS[1], 'w', ARGV[4], 'cfg', ARGV[5])
  redis.call('HDEL', KEYS[1], 'closed')
  redis.call('SADD', KEYS[3], ARGV[6])
  emitChannel(KEYS[4], KEYS[1], ARGV[6], ARGV[1], ARGV[7])
end
return redis.call('HMGET', KEYS[1], 'w', 'bal', 'claimed', 'charged', 'signed', 'sig', 'cfg')
`)

// voucherScript draws a request's calls from a batch-settlement channel for a
// voucher whose signature was checked, on the channel's shard: the channel
// known, the voucher's cumulative amount exactly the charged total plus the
// request's price (so a replayed or older voucher is refused), within the
// known deposit; then it becomes the channel's latest voucher. The caller's
// IP rate is checked by gateScript on the address's shard in the same round
// trip (shard.go).
//
// The drawn voucher's state is appended to the stream as a ChannelState
// event (settlementd keeps it in PostgreSQL: the signature exists nowhere
// else). While the shard's generation marker is missing the answer is
// "recovering": an unknown channel then may just not be rebuilt yet.
//
// KEYS: 1 stream, 2 channel hash, 3 requests today, 4 generation marker.
// ARGV: 1 now ms, 2 calls, 3 price, 4 cumulative, 5 signature, 6 wallet,
// 7 event type, 8 event version, 9 debit payload, 10 daily key TTL s,
// 11 channel id, 12 the shard's ledger floor (seqLua).
// Reply: {code, 0, channel fields}, served with the Debit's entry id, the
// ChannelState's and its payload after them: 1 served, 8 recovering, 9 unknown
// channel, 10 cumulative mismatch, 11 over the deposit, 12 closed by a
// cooperative refund.
var voucherScript = redis.NewScript(channelEmitLua + seqLua + `
local older = advance(shardOf(KEYS[4], 'generation'), tonumber(ARGV[12]) or 0)
if older > 0 then return {8, older, {}} end
if redis.call('EXISTS', KEYS[4]) == 0 then return {8, 0, {}} end
local n = tonumber(ARGV[2])
local st = redis.call('HMGET', KEYS[2], 'w', 'bal', 'claimed', 'charged', 'signed', 'sig', 'cfg')
if not st[1] or st[1] ~= ARGV[6] then return {9, 0, st} end
if redis.call('HEXISTS', KEYS[2], 'closed') == 1 then return {12, 0, st} end
local cum = tonumber(ARGV[4])
if cum ~= tonumber(st[4] or '0') + tonumber(ARGV[3]) then return {10, 0, st} end
if cum > tonumber(st[2] or '0') then return {11, 0, st} end
redis.call('HSET', KEYS[2], 'charged', ARGV[4], 'signed', ARGV[4], 'sig', ARGV[5], 'ts', ARGV[1])
if redis.call('INCRBY', KEYS[3], n) == n then redis.call('EXPIRE', KEYS[3], ARGV[10]) end
local dxid = redis.call('XADD', KEYS[1], '*', 't', ARGV[7], 'v', ARGV[8], 'd', ARGV[9])
local cxid, cdata = emitChannel(KEYS[1], KEYS[2], ARGV[11], nil, ARGV[1])
return {1, 0, redis.call('HMGET', KEYS[2], 'w', 'bal', 'claimed', 'charged', 'signed', 'sig', 'cfg'), dxid, cxid, cdata}
`)

// claimedScript raises a known channel's totalClaimed (KEYS[1] the channel
// hash, KEYS[2] the shard's stream, ARGV[1] the on-chain total, ARGV[2] the
// channel id, ARGV[3] now ms); a channel this Redis does not know is left alone. A raise is
// a ChannelState event.
var claimedScript = redis.NewScript(channelEmitLua + `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if tonumber(redis.call('HGET', KEYS[1], 'claimed') or '0') < tonumber(ARGV[1]) then
  redis.call('HSET', KEYS[1], 'claimed', ARGV[1])
  emitChannel(KEYS[2], KEYS[1], ARGV[2], nil, ARGV[3])
end
return 1
`)

// closeScript closes a channel for a cooperative refund: the channel known
// and the payer's, the refund voucher's amount exactly the charged total
// (a zero-charge voucher); from then on no voucher is drawn, so the charged
// total the facilitator claims is final.
//
// An unknown channel while the shard's generation marker is missing is
// "recovering", as for a voucher: it may just not be rebuilt yet, and "no
// deposit" would send the client to deposit again.
//
// KEYS: 1 channel hash, 2 the shard's stream, 3 generation marker. ARGV:
// 1 wallet, 2 the refund voucher's amount, 3 channel id, 4 now ms.
// Reply: {code, channel fields}: 1 closed, 8 recovering, 9 unknown channel,
// 10 mismatch.
var closeScript = redis.NewScript(channelEmitLua + `
local st = redis.call('HMGET', KEYS[1], 'w', 'bal', 'claimed', 'charged', 'signed', 'sig', 'cfg')
if not st[1] and redis.call('EXISTS', KEYS[3]) == 0 then return {8, st} end
if not st[1] or st[1] ~= ARGV[1] then return {9, st} end
if tonumber(ARGV[2]) ~= tonumber(st[4] or '0') then return {10, st} end
redis.call('HSET', KEYS[1], 'closed', '1')
emitChannel(KEYS[2], KEYS[1], ARGV[3], nil, ARGV[4])
return {1, st}
`)

// refundedScript records a cooperative refund's outcome on a closed
// channel: the on-chain balance and totalClaimed read after it; reopen
// (ARGV[3] = 1) clears the close, for a partial refund or a failed one.
//
// KEYS: 1 channel hash, 2 the shard's stream. ARGV: 1 balance (-1:
// unchanged), 2 totalClaimed, 3 reopen, 4 channel id, 5 now ms.
var refundedScript = redis.NewScript(channelEmitLua + `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if tonumber(ARGV[1]) >= 0 then redis.call('HSET', KEYS[1], 'bal', ARGV[1]) end
if tonumber(redis.call('HGET', KEYS[1], 'claimed') or '0') < tonumber(ARGV[2]) then
  redis.call('HSET', KEYS[1], 'claimed', ARGV[2])
end
if ARGV[3] == '1' then redis.call('HDEL', KEYS[1], 'closed') end
emitChannel(KEYS[2], KEYS[1], ARGV[4], nil, ARGV[5])
return 1
`)

// recordChannelScript appends a channel's state, as the hash holds it now,
// to the stream: one ChannelState event per deposit transaction the channel
// recorded (so PostgreSQL learns them too), or one event without any. It
// changes nothing but the change counter. For channels PostgreSQL has no
// state of: drawn from before channel states were recorded, and unchanged
// since.
//
// KEYS: 1 channel hash, 2 its deposits set, 3 the shard's stream.
// ARGV: 1 channel id, 2 now ms. Reply: 1 recorded, 0 no such channel.
var recordChannelScript = redis.NewScript(channelEmitLua + `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local txs = redis.call('SMEMBERS', KEYS[2])
if #txs == 0 then emitChannel(KEYS[3], KEYS[1], ARGV[1], nil, ARGV[2]) end
for _, tx in ipairs(txs) do emitChannel(KEYS[3], KEYS[1], ARGV[1], tx, ARGV[2]) end
return 1
`)

// channelEmitLua defines emitChannel(stream, hash, id, tx, ms): it counts a
// change of the channel hash (field seq) and appends the channel's state
// after it to the stream as a ChannelState event (tx: the deposit
// transaction the change recorded, or nil; ms the gateway's time) and
// returns the entry's id and payload (the gateway keeps a voucher draw's,
// retain.go). settlementd keeps the newest
// state per channel in PostgreSQL and rebuilds the hash from it after a
// Redis loss (the latest voucher's signature exists nowhere else). The
// amounts travel as the hash's own strings, never through Lua numbers.
const channelEmitLua = `
local function emitChannel(stream, ch, id, tx, ms)
  local seq = redis.call('HINCRBY', ch, 'seq', 1)
  local f = redis.call('HMGET', ch, 'w', 'bal', 'claimed', 'charged', 'signed', 'sig', 'cfg', 'closed')
  local ev = {channel = id, seq = tostring(seq), ts = ms,
    w = f[1] or '', bal = f[2] or '0', claimed = f[3] or '0', charged = f[4] or '0', signed = f[5] or '0',
    sig = f[6] or '', cfg = f[7] or '', closed = f[8] == '1'}
  if tx then ev.tx = tx end
  local d = cjson.encode(ev)
  return redis.call('XADD', stream, '*', 't', '` + events.TypeChannelState + `', 'v', '` + events.Version + `', 'd', d), d
end
`
