-- Set a pipeline's lease on one Redlock quorum node, with the fencing token
-- the primary just reserved.
--
-- KEYS[1] lease  KEYS[2] highest token released  KEYS[3] last completed slot
-- KEYS[4] once-completed marker
-- ARGV[1] the lease value "<token> <run> <mode> <owner>"  ARGV[2] token
-- ARGV[3] requested run number (> 0 slot, 0 auto, -1 once)
-- ARGV[4] lease TTL (ms)  ARGV[5] owner
--
-- Returns {1} when set, {0, holder token} when another owner holds the
-- lease here, {-1} when the slot completed (the node keeps a copy of the
-- primary's record for a while, see quorum.go), {-2, seen} when this token
-- is stale here.
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

-- A token not above one already released here is stale: its sender stalled
-- after reserving it, or the request arrives after the release that gave it
-- up (requests to one node travel on different connections). Refusing it
-- keeps the holders' tokens in increasing order even when the primary lost
-- its reservation, and keeps a late request from leaving a lease nobody
-- will release. A retry of a request that already set this very lease is
-- the one exception.
local seen = redis.call('GET', KEYS[2])
if seen and tonumber(seen) >= tonumber(ARGV[2]) then
  if redis.call('GET', KEYS[1]) == ARGV[1] then
    return {1}
  end
  return {-2, tonumber(seen)}
end

if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[4]) then
  return {1}
end
local held = redis.call('GET', KEYS[1])
if held == ARGV[1] then
  return {1}
end
local holder, owner = string.match(held, '^(%d+) %-?%d+ %-?%d+ (.*)$')
if owner ~= ARGV[5] then
  return {0, tonumber(holder)}
end
-- The same owner: a leftover of its own earlier attempt, which it may
-- replace; but a late request of an earlier attempt must not replace the
-- lease it holds now.
if tonumber(holder) > tonumber(ARGV[2]) then
  return {-2, tonumber(holder)}
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[4])
return {1}
