-- Acquire a pipeline's lease and mint its fencing token, atomically.
--
-- KEYS[1] lease  KEYS[2] fencing counter  KEYS[3] last completed slot
-- KEYS[4] once-completed marker
-- ARGV[1] owner (unique per coordinator instance)  ARGV[2] worker id
-- ARGV[3] requested run number: > 0 slot, 0 auto, -1 once
-- ARGV[4] lease TTL (ms)  ARGV[5] TTL of counter and slot keys (ms, 0 keeps)
--
-- Returns {1, token, run} when acquired, {0, holder token} when another
-- owner holds the lease, {-1} when the slot already completed.
local mode = tonumber(ARGV[3])
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

local holder = redis.call('HMGET', KEYS[1], 'owner', 'token')
-- A lease held by this very owner is one whose reply was lost (a retried
-- command) or that the owner already gave up locally: the owner does not
-- ask while it believes it holds one, so it is free to take again, with a
-- new token.
if holder[1] and holder[1] ~= ARGV[1] then
  return {0, tonumber(holder[2])}
end

-- Tokens are max(last + 1, Redis time in microseconds). The clock term keeps
-- them increasing when the counter is lost (expired, restart without
-- persistence, failover to a replica that missed writes): see fencing.go.
local now = redis.call('TIME')
local token = tonumber(now[1]) * 1000000 + tonumber(now[2])
local last = redis.call('GET', KEYS[2])
if last then
  last = tonumber(last)
  if last >= token then
    token = last + 1
  end
end
local keyttl = tonumber(ARGV[5])
if keyttl > 0 then
  redis.call('SET', KEYS[2], token, 'PX', keyttl)
  redis.call('PEXPIRE', KEYS[3], keyttl)
else
  redis.call('SET', KEYS[2], token)
end

local run = mode
if mode <= 0 then
  run = token
end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'worker', ARGV[2], 'token', token,
  'run', run, 'mode', mode, 'acquired_ms', tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000))
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return {1, token, run}
