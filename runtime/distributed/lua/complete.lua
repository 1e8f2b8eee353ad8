-- Release a lease after a successful run and record its slot as completed.
--
-- KEYS[1] lease  KEYS[2] last completed slot  KEYS[3] once-completed marker
-- ARGV[1] owner  ARGV[2] token  ARGV[3] requested run number (> 0 slot,
-- 0 auto, -1 once)  ARGV[4] once marker TTL (ms)
-- ARGV[5] TTL of the slot key (ms, 0 keeps)
--
-- Returns 1 when the lease was held and deleted, 0 when it was gone or held
-- by another. The slot is recorded either way: the run did complete, and
-- recording it only ever stops a repeat.
local v = redis.call('HMGET', KEYS[1], 'owner', 'token')
local owned = 0
if v[1] == ARGV[1] and tonumber(v[2]) == tonumber(ARGV[2]) then
  redis.call('DEL', KEYS[1])
  owned = 1
end
local mode = tonumber(ARGV[3])
if mode > 0 then
  local done = redis.call('GET', KEYS[2])
  if not done or tonumber(done) < mode then
    redis.call('SET', KEYS[2], ARGV[3])
  end
  local keyttl = tonumber(ARGV[5])
  if keyttl > 0 then
    redis.call('PEXPIRE', KEYS[2], keyttl)
  end
elseif mode == -1 then
  redis.call('SET', KEYS[3], '1', 'PX', ARGV[4])
end
return owned
