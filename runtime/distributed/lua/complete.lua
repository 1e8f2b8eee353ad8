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
  -- Slots complete in order almost always, so the slot is written first
  -- and the mark put back in the rare case a later slot was recorded.
  local prev
  if keyttl > 0 then
    prev = redis.call('SET', KEYS[3], ARGV[2], 'PX', keyttl, 'GET')
  else
    prev = redis.call('SET', KEYS[3], ARGV[2], 'GET')
  end
  if prev and tonumber(prev) > mode then
    redis.call('SET', KEYS[3], prev, 'KEEPTTL')
  end
  if keyttl > 0 then
    redis.call('PEXPIRE', KEYS[2], keyttl)
  end
elseif mode == -1 then
  redis.call('SET', KEYS[4], '1', 'PX', ARGV[3])
end
return owned
