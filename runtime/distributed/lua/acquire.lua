-- Acquire a pipeline's lease and mint its fencing token, atomically.
--
-- KEYS[1] lease  KEYS[2] last fencing token  KEYS[3] last completed slot
-- KEYS[4] once marker (passed with run number -1 only)
-- ARGV[1] owner (unique per coordinator instance)
-- ARGV[2] requested run number: > 0 slot, 0 auto, -1 once
-- ARGV[3] lease TTL (ms)  ARGV[4] state TTL (ms, 0 keeps)
--
-- The lease is a list holding the one string "<token> <run> <owner>", with a
-- PX expiry; run is the slot, or the token itself for auto and once. A list,
-- so that release is a plain LREM: an atomic compare-and-delete on owner and
-- token that needs no script (see release.go).
-- Returns the token (> 0) when acquired, 0 when another owner holds the
-- lease, -1 when the slot already completed: one integer, the cheapest reply.
--
-- Each redis.call costs about as much as a command a client sends, so the
-- common path makes as few as the rules allow: TIME, one SET that writes the
-- new token and returns the last, RPUSH and PEXPIRE of the lease.
local mode = tonumber(ARGV[2])
if mode > 0 then
  local done = redis.call('GET', KEYS[3])
  if done and mode <= tonumber(done) then
    return -1
  end
elseif mode == -1 and redis.call('EXISTS', KEYS[4]) == 1 then
  return -1
end

-- Tokens are max(last + 1, Redis time in µs); see fencing.go. The clock is
-- usually ahead, so the token is written before the last one is known, and
-- fixed in the rare case it is not.
local now = redis.call('TIME')
local token = tonumber(now[1]) * 1000000 + tonumber(now[2])
local text = string.format('%d', token)
local keyttl = tonumber(ARGV[4])
local last
if keyttl > 0 then
  last = redis.call('SET', KEYS[2], text, 'PX', keyttl, 'GET')
else
  last = redis.call('SET', KEYS[2], text, 'GET')
end
if last and tonumber(last) >= token then
  token = tonumber(last) + 1
  text = string.format('%d', token)
  redis.call('SET', KEYS[2], text, 'KEEPTTL')
end
local run = ARGV[2]
if mode <= 0 then
  run = text
end
local value = text .. ' ' .. run .. ' ' .. ARGV[1]

-- The list is empty (absent) exactly when the lease is free.
if redis.call('RPUSH', KEYS[1], value) ~= 1 then
  redis.call('RPOP', KEYS[1])
  local held = redis.call('LINDEX', KEYS[1], 0)
  local owner = string.match(held, '^%d+ %-?%d+ (.*)$')
  -- A lease held by this very owner is one whose reply was lost (a retried
  -- command) or that the owner already gave up locally: the owner does not
  -- ask while it believes it holds one, so it may take it again, with the
  -- new token.
  if owner ~= ARGV[1] then
    -- Refused: put the last token back, so only granted leases move it.
    if last then
      redis.call('SET', KEYS[2], last, 'KEEPTTL')
    else
      redis.call('DEL', KEYS[2])
    end
    return 0
  end
  redis.call('LSET', KEYS[1], 0, value)
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])

if keyttl > 0 then
  redis.call('PEXPIRE', KEYS[3], keyttl)
end
return token
