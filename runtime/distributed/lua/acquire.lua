-- Acquire a pipeline's lease and mint its fencing token, atomically.
--
-- KEYS[1] lease  KEYS[2] last fencing token  KEYS[3] last completed slot
-- KEYS[4] once marker (passed with run number -1 only)
-- ARGV[1] owner "<worker id>#<hex>" (unique per coordinator instance)
-- ARGV[2] requested run number: > 0 slot, 0 auto, -1 once
-- ARGV[3] lease TTL (ms)  ARGV[4] state TTL (ms, 0 keeps)
-- ARGV[5] worker record key prefix ('' turns takeover off)
-- ARGV[6] this worker's record key ('' when the worker wrote it recently
-- enough, see beginAcquire)  ARGV[7] worker record TTL (ms)
--
-- The lease is a list holding the one string "<token> <run> <owner>", with a
-- PX expiry; run is the slot, or the token itself for auto and once. A list,
-- so that release is a plain LREM: an atomic compare-and-delete on owner and
-- token that needs no script (see release.go).
-- Returns the token (> 0) when acquired, 0 when another owner holds the
-- lease, -1 when the slot already completed, -2 when this worker's record
-- is missing (it must register first): one integer, the cheapest reply.
--
-- Each redis.call costs about as much as a command a client sends, so a
-- refusal is decided by reads alone, before any token is minted (a lease
-- held by a live owner: LINDEX and EXISTS; a completed slot: LINDEX and
-- GET), and a grant writes only what it must.
local held = redis.call('LINDEX', KEYS[1], 0)
if held then
  local owner = string.match(held, '^%d+ %-?%d+ (.*)$')
  -- A lease held by this very owner is one whose reply was lost (a retried
  -- command) or that the owner already gave up locally: the owner does not
  -- ask while it believes it holds one, so it may take it again.
  if owner ~= ARGV[1] then
    -- Another owner's lease is taken over only once that owner's registry
    -- record is gone: it gave the lease up locally before the record could
    -- expire (see takeover.go).
    local worker = ARGV[5] ~= '' and string.match(owner, '^(.*)#%x+$')
    if not worker or redis.call('EXISTS', ARGV[5] .. worker) == 1 then
      return 0
    end
  end
end

-- The slot rule, read only for a lease that is free (or this owner's): a
-- lease held by another is refused the same either way.
local mode = tonumber(ARGV[2])
if mode > 0 then
  local done = redis.call('GET', KEYS[3])
  if done and mode <= tonumber(done) then
    return -1
  end
elseif mode == -1 and redis.call('EXISTS', KEYS[4]) == 1 then
  return -1
end

-- The grant refreshes this worker's own record, so a contender cannot take
-- the lease over from a record about to expire; a missing record (deleted,
-- or the server restarted empty) must be written whole first.
if ARGV[6] ~= '' and redis.call('PEXPIRE', ARGV[6], ARGV[7]) == 0 then
  return -2
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

if held then
  redis.call('LSET', KEYS[1], 0, value)
else
  redis.call('RPUSH', KEYS[1], value)
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])

if keyttl > 0 then
  redis.call('PEXPIRE', KEYS[3], keyttl)
end
return token
