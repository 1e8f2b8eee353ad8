-- Extend a lease on one Redlock quorum node if this owner still holds it
-- with this token, or put it back on a node that lost it.
--
-- KEYS[1] lease  KEYS[2] highest token seen  KEYS[3] last completed slot
-- KEYS[4] once-completed marker
-- ARGV[1] owner  ARGV[2] token  ARGV[3] lease TTL (ms)
-- ARGV[4] TTL of the seen key (ms)  ARGV[5] worker id  ARGV[6] run number
-- ARGV[7] requested run number (> 0 slot, 0 auto, -1 once)
--
-- Returns 1 when extended, 2 when put back, 0 when the lease is gone or held
-- by another.
local v = redis.call('HMGET', KEYS[1], 'owner', 'token')
if v[1] == ARGV[1] and tonumber(v[2]) == tonumber(ARGV[2]) then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  if redis.call('PEXPIRE', KEYS[2], ARGV[4]) == 0 then
    redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[4])
  end
  return 1
end
if v[1] then
  return 0
end

-- No lease here and no token seen: this node lost its data (restarted
-- without persistence) since the lease was set, and nobody has taken it
-- since, so it can hold the lease again. A seen key still present means the
-- lease expired or was released here, or someone else came by: then not.
if redis.call('EXISTS', KEYS[2]) == 1 then
  return 0
end
local mode = tonumber(ARGV[7])
if mode > 0 then
  local done = redis.call('GET', KEYS[3])
  if done and mode <= tonumber(done) then
    return 0
  end
elseif mode == -1 and redis.call('EXISTS', KEYS[4]) == 1 then
  return 0
end
redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'worker', ARGV[5], 'token', ARGV[2],
  'run', ARGV[6], 'mode', ARGV[7])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[4])
return 2
