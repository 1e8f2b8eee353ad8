-- Extend a lease on one Redlock quorum node if it is still exactly this
-- owner's with this token; or, asked to, put it back on a node that lost it.
--
-- KEYS[1] lease  KEYS[2] highest token released  KEYS[3] last completed slot
-- KEYS[4] once-completed marker
-- ARGV[1] the lease value "<token> <run> <mode> <owner>"  ARGV[2] lease TTL
-- (ms)  ARGV[3] requested run number (> 0 slot, 0 auto, -1 once)
-- ARGV[4] 1 to put the lease back if missing, 0 to only say so
--
-- Returns 1 when extended, 2 when put back, 3 when missing and free to be
-- put back (ARGV[4] 0), 0 when gone for good or held by another.
local held = redis.call('GET', KEYS[1])
if held == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if held then
  return 0
end

-- No lease here, and nobody else holds it on this node either: the node
-- lost it (restarted empty) or it expired. It may carry it again, which is
-- how a lease outlives quorum nodes restarted one after another, but only
-- in a second step the holder sends once a majority has just extended the
-- lease (ARGV[4] 1): a renewal that waited at a stalled server and runs
-- after its holder gave up must not bring a dead lease back. Never after a
-- release, nor once the run completed.
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
if ARGV[4] ~= '1' then
  return 3
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 2
