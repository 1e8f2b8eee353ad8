-- Acquire a pipeline's lease and mint its fencing token, atomically.
--
-- KEYS[1] lease  KEYS[2] pipeline state (hash: token, done)  KEYS[3] once marker
-- ARGV[1] owner (unique per coordinator instance)
-- ARGV[2] requested run number: > 0 slot, 0 auto, -1 once
-- ARGV[3] lease TTL (ms)  ARGV[4] state TTL (ms, 0 keeps)
--
-- The lease is the string "<token> <run> <owner>" with a PX expiry; run is
-- the slot, or the token itself for auto and once.
-- Returns the token (> 0) when acquired, 0 when another owner holds the
-- lease, -1 when the slot already completed: one integer, the cheapest reply.
local mode = tonumber(ARGV[2])
if mode == -1 and redis.call('EXISTS', KEYS[3]) == 1 then
  return -1
end
local state = redis.call('HMGET', KEYS[2], 'token', 'done')
if mode > 0 and state[2] and mode <= tonumber(state[2]) then
  return -1
end

-- Tokens are max(last + 1, Redis time in microseconds). The clock term keeps
-- them increasing when the state is lost (expired, restart without
-- persistence, failover to a replica that missed writes): see fencing.go.
local now = redis.call('TIME')
local token = tonumber(now[1]) * 1000000 + tonumber(now[2])
if state[1] then
  local last = tonumber(state[1])
  if last >= token then
    token = last + 1
  end
end
local run = mode
if mode <= 0 then
  run = token
end
local value = string.format('%d %d %s', token, run, ARGV[1])

if not redis.call('SET', KEYS[1], value, 'NX', 'PX', ARGV[3]) then
  local held = redis.call('GET', KEYS[1])
  local owner = string.match(held, '^%d+ %-?%d+ (.*)$')
  -- A lease held by this very owner is one whose reply was lost (a retried
  -- command) or that the owner already gave up locally: the owner does not
  -- ask while it believes it holds one, so it may take it again, with a new
  -- token.
  if owner ~= ARGV[1] then
    return 0
  end
  redis.call('SET', KEYS[1], value, 'PX', ARGV[3])
end

redis.call('HSET', KEYS[2], 'token', string.format('%d', token))
local keyttl = tonumber(ARGV[4])
if keyttl > 0 then
  redis.call('PEXPIRE', KEYS[2], keyttl)
end
return token
