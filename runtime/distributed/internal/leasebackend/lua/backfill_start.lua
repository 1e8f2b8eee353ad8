-- Start a pipeline's backfill (backfill.go), unless one is running; or
-- write back one a replica remembers after Redis lost it.
--
-- KEYS[1] the backfill hash <prefix>backfill:{<pipeline>}
-- KEYS[2] the pipeline's completed key (see acquire.lua)
-- ARGV[1] id   ARGV[2] the request (JSON)   ARGV[3] parallel
-- ARGV[4] how many slots the range holds   ARGV[5] the hash's TTL (ms, 0:
--         none), so that a finished backfill's progress does not stay
--         forever
-- To write one back (ARGV[6] = 'restore'): ARGV[7] the cursor ('' none),
-- ARGV[8..10] the counts done, skipped, failed, ARGV[11] '1' when no slot
-- was left to hand out, ARGV[12..] the slots that were in flight: they are
-- written expired, so the next claims hand them out again first.
--
-- The slots an earlier backfill completed above the completed slot
-- ("c:<slot>", backfill_finish.lua) are kept: acquire.lua refuses them to
-- the schedule. Those at or below it go; acquire.lua refuses them anyway.
--
-- Returns 1 when written; 0 when a backfill is running (its id is left as
-- it was); -6 when the key holds what agora does not write there.
local h = KEYS[1]
local state = redis.pcall('HGET', h, 'state')
if type(state) == 'table' then
  return -6
end
if state == 'running' then
  return 0
end
local kept = {}
local mark = redis.pcall('ZSCORE', KEYS[2], 'slot')
if type(mark) == 'table' then
  mark = false -- not agora's: the acquire script says so
end
mark = mark and tonumber(mark)
local old = redis.call('HKEYS', h)
for _, k in ipairs(old) do
  if string.sub(k, 1, 2) == 'c:' then
    local s = tonumber(string.sub(k, 3))
    if s and (not mark or s > mark) then
      kept[#kept + 1] = k
    end
  end
end
redis.call('DEL', h)
for _, k in ipairs(kept) do
  redis.call('HSET', h, k, '1')
end
if #kept == 0 and ARGV[6] ~= 'restore' then
  -- No slot of an earlier backfill above the completed slot: the schedule
  -- need not read this hash until a claim says so (acquire.lua).
  redis.pcall('ZREM', KEYS[2], 'backfill')
end
redis.call('HSET', h, 'id', ARGV[1], 'req', ARGV[2], 'state', 'running', 'parallel', ARGV[3],
  'total', ARGV[4], 'done', 0, 'skipped', 0, 'failed', 0, 'consec', 0)
if ARGV[6] == 'restore' then
  if ARGV[7] ~= '' then
    redis.call('HSET', h, 'cursor', ARGV[7])
  end
  redis.call('HSET', h, 'done', ARGV[8], 'skipped', ARGV[9], 'failed', ARGV[10])
  if ARGV[11] == '1' then
    redis.call('HSET', h, 'exhausted', '1')
  end
  for i = 12, #ARGV do
    redis.call('HSET', h, 'f:' .. ARGV[i], '0 0 restored')
  end
end
if tonumber(ARGV[5]) > 0 then
  redis.call('PEXPIRE', h, ARGV[5])
end
return 1
