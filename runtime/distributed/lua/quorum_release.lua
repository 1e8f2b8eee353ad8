-- Delete a lease on one Redlock quorum node if this owner still holds it
-- with this token; after a successful run also keep a copy of the completed
-- slot (or Once run), so an acquisition that passed the primary's check just
-- before the completion was recorded there is refused here.
--
-- KEYS[1] lease  KEYS[2] last completed slot  KEYS[3] once-completed marker
-- KEYS[4] highest token seen
-- ARGV[1] owner  ARGV[2] token  ARGV[3] requested run number (> 0 slot,
-- 0 auto, -1 once)  ARGV[4] 1 after a successful run, else 0
-- ARGV[5] TTL of the slot copy and seen key (ms)  ARGV[6] TTL of the once
-- marker (ms)
--
-- Returns 1 when deleted, 0 when the lease is gone or held by another.
local v = redis.call('HMGET', KEYS[1], 'owner', 'token')
local owned = 0
local token = tonumber(ARGV[2])
if v[1] == ARGV[1] and tonumber(v[2]) == token then
  redis.call('DEL', KEYS[1])
  owned = 1
end
-- The acquire request of this token may still be on its way (it travels on
-- another connection): raising the seen token makes the node refuse it.
local seen = redis.call('GET', KEYS[4])
if not seen or tonumber(seen) < token then
  redis.call('SET', KEYS[4], ARGV[2], 'PX', ARGV[5])
end
if ARGV[4] == '1' then
  local mode = tonumber(ARGV[3])
  if mode > 0 then
    local done = redis.call('GET', KEYS[2])
    if not done or tonumber(done) < mode then
      redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[5])
    else
      redis.call('PEXPIRE', KEYS[2], ARGV[5])
    end
  elseif mode == -1 then
    redis.call('SET', KEYS[3], '1', 'PX', ARGV[6])
  end
end
return owned
