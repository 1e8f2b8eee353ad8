-- Extend a lease on one Redlock quorum node if it is still exactly this
-- owner's with this token, or put it back on a node that lost it.
--
-- KEYS[1] lease  KEYS[2] highest token released  KEYS[3] last completed slot
-- KEYS[4] once-completed marker
-- ARGV[1] the lease value "<token> <run> <mode> <owner>"  ARGV[2] lease TTL
-- (ms)  ARGV[3] requested run number (> 0 slot, 0 auto, -1 once)
--
-- Returns 1 when extended, 2 when put back, 0 when the lease is gone or held
-- by another.
local held = redis.call('GET', KEYS[1])
if held == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if held then
  return 0
end

-- No lease here. Nobody else holds it on this node either, and any lease
-- that expired here had outlived its holder's validity window, so the node
-- can carry this one again: that is how a lease outlives quorum nodes
-- restarted empty one after another. Not after a release, though (a late
-- renewal must not bring a given-up lease back), nor once the run completed.
if redis.call('EXISTS', KEYS[2]) == 1 then
  return 0
end
local mode = tonumber(ARGV[3])
if mode > 0 then
  local done = redis.call('GET', KEYS[3])
  if done and mode <= tonumber(done) then
    return 0
  end
elseif mode == -1 and redis.call('EXISTS', KEYS[4]) == 1 then
  return 0
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 2
