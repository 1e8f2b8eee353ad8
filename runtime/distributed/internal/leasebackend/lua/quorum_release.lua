-- Delete a lease on one Redlock quorum node if it is still exactly this
-- owner's with this token; after a successful run also keep a copy of the
-- completed slot (or Once run), so an acquisition that passed the primary's
-- check just before the completion was recorded there is refused here.
--
-- KEYS[1] lease  KEYS[2] highest token released  KEYS[3] last completed slot
-- KEYS[4] once-completed marker
-- ARGV[1] the lease value "<token> <run> <mode> <owner>"  ARGV[2] token
-- ARGV[3] requested run number  ARGV[4] 1 after a successful run, else 0
-- ARGV[5] TTL of the released-token and slot copies (ms)
-- ARGV[6] TTL of the once marker (ms)
--
-- Returns 1 when deleted, 0 when the lease is gone or held by another.
local owned = 0
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  owned = 1
end
-- Recorded even when the lease is not here: its acquire request may still
-- be on its way, and must then be refused.
local seen = redis.call('GET', KEYS[2])
if not seen or tonumber(seen) < tonumber(ARGV[2]) then
  redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[5])
end
if ARGV[4] == '1' then
  local mode = tonumber(ARGV[3])
  if mode > 0 then
    local done = redis.call('GET', KEYS[3])
    if not done or tonumber(done) < mode then
      redis.call('SET', KEYS[3], ARGV[3], 'PX', ARGV[5])
    else
      redis.call('PEXPIRE', KEYS[3], ARGV[5])
    end
  elseif mode == -1 then
    redis.call('SET', KEYS[4], '1', 'PX', ARGV[6])
  end
end
return owned
