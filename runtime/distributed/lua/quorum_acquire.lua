-- Set a pipeline's lease on one Redlock quorum node, with the fencing token
-- the primary just reserved.
--
-- KEYS[1] lease  KEYS[2] highest token seen  KEYS[3] last completed slot
-- KEYS[4] once-completed marker
-- ARGV[1] owner  ARGV[2] worker id  ARGV[3] token  ARGV[4] run number
-- ARGV[5] requested run number (> 0 slot, 0 auto, -1 once)
-- ARGV[6] lease TTL (ms)  ARGV[7] TTL of the seen key (ms)
--
-- Returns {1} when set, {0, holder token} when another owner holds the
-- lease here, {-1} when the slot completed (the node keeps a copy of the
-- primary's record for a while, see quorum.go), {-2, seen} when this token
-- is stale here.
local mode = tonumber(ARGV[5])
if mode > 0 then
  local done = redis.call('GET', KEYS[3])
  if done and mode <= tonumber(done) then
    return {-1}
  end
elseif mode == -1 then
  if redis.call('EXISTS', KEYS[4]) == 1 then
    return {-1}
  end
end

local token = tonumber(ARGV[3])
local holder = redis.call('HMGET', KEYS[1], 'owner', 'token')
-- The same owner: a retried request (same token) or a leftover of its own
-- failed attempt; either way it may be replaced.
if holder[1] and holder[1] ~= ARGV[1] then
  return {0, tonumber(holder[2])}
end

-- A token not above the largest this node has seen is a stale request: its
-- sender stalled after reserving it, or it arrives after the release that
-- gave it up (requests to one node travel on different connections). The
-- only exception is a retry of a request that already set this very lease.
-- Refusing the rest keeps the holders' tokens in increasing order even when
-- the primary's reservation was lost, and keeps a late request from leaving
-- a lease nobody will release.
local seen = redis.call('GET', KEYS[2])
if seen and tonumber(seen) >= token and not (holder[1] == ARGV[1] and tonumber(holder[2]) == token) then
  return {-2, tonumber(seen)}
end

redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'worker', ARGV[2], 'token', ARGV[3],
  'run', ARGV[4], 'mode', ARGV[5])
redis.call('PEXPIRE', KEYS[1], ARGV[6])
redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[7])
return {1}
