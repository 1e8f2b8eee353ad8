-- Decide, fleet-wide, whether the caller reports a slot that missed its
-- deadline (runtime.ScheduledPipeline.Deadline): exactly one caller per
-- pipeline and slot, and only when the slot has not completed.
--
-- KEYS[1] last completed slot (sorted set; see keys.go)
-- KEYS[2] the last slot reported as missed (string, Unix s; see keys.go)
-- ARGV[1] the slot (Unix s)  ARGV[2] state TTL (ms, 0 keeps)
--
-- A slot is completed when the member "slot" of the completed set is
-- scored with it or a later slot, the rule the acquire script refuses a
-- completed slot by. Only that member is read: the set also holds the run
-- history and the failure state ("fails", "fail_until", scored above
-- 2^52), none of which is a slot.
--
-- The reported key keeps the highest slot reported, so slots are reported
-- in order and each once: a caller that checks late (its replica was down
-- at the deadline) still reports a slot nobody reported, but never one
-- older than the last reported. It expires with the state TTL, as the
-- completed set does, so it never outlives what it is compared with.
--
-- Returns 1: report it (recorded as reported); 0: completed, or reported
-- already (this slot or a later one); -6 when the completed set, -7 when
-- the reported key, holds what agora does not write there (another type, a
-- value that is not a slot): nothing is written, never a silent reset,
-- and the caller names the key.
local slot = tonumber(ARGV[1])
local done = redis.pcall('ZSCORE', KEYS[1], 'slot')
if type(done) == 'table' then -- an error reply: WRONGTYPE
  return -6
end
if done and tonumber(done) >= slot then
  return 0
end
local last = redis.pcall('GET', KEYS[2])
if type(last) == 'table' then
  return -7
end
if last then
  -- At most 16 digits, as the token key: a Lua number holds it exactly.
  if #last > 16 or not string.match(last, '^%d+$') then
    return -7
  end
  if tonumber(last) >= slot then
    return 0
  end
end
local ttl = tonumber(ARGV[2])
if ttl > 0 then
  redis.call('SET', KEYS[2], ARGV[1], 'PX', ttl)
else
  redis.call('SET', KEYS[2], ARGV[1])
end
return 1
