-- Release a lease after a successful run and record its slot as completed.
--
-- KEYS[1] lease  KEYS[2] last fencing token  KEYS[3] last completed slot
-- KEYS[4] once marker
-- ARGV[1] the lease value "<token> <run> <owner>"
-- ARGV[2] requested run number (> 0 slot, 0 auto, -1 once)
-- ARGV[3] once marker TTL (ms)  ARGV[4] state TTL (ms, 0 keeps)
--
-- Returns 1 when the lease was held and deleted, 0 when it was gone or held
-- by another. The slot is recorded either way: the run did complete, and
-- recording it only ever stops a repeat.
local owned = redis.call('LREM', KEYS[1], 1, ARGV[1])
local mode = tonumber(ARGV[2])
if mode > 0 then
  local keyttl = tonumber(ARGV[4])
  local done = redis.call('GET', KEYS[3])
  if not done or tonumber(done) < mode then
    if keyttl > 0 then
      redis.call('SET', KEYS[3], ARGV[2], 'PX', keyttl)
    else
      redis.call('SET', KEYS[3], ARGV[2])
    end
  elseif keyttl > 0 then
    redis.call('PEXPIRE', KEYS[3], keyttl)
  end
  if keyttl > 0 then
    redis.call('PEXPIRE', KEYS[2], keyttl)
  end
elseif mode == -1 then
  redis.call('SET', KEYS[4], '1', 'PX', ARGV[3])
end
return owned
