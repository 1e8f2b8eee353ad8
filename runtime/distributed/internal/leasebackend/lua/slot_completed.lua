-- Whether one slot of a pipeline completed (runtime.SlotCompletionReader),
-- which a downstream pipeline (runtime.ScheduledPipeline.After) waits for.
--
-- KEYS[1] the completed key (sorted set; see keys.go)
-- ARGV[1] the slot (Unix s)
-- ARGV[2] the lowest end (Unix ms) a run of the slot may be recorded with:
--         the slot less the lease TTL, the clock disagreement the fleet
--         is assumed to stay within
--
-- The member "slot" holds the last completed scheduled slot: equal to the
-- slot, the slot completed. Otherwise only a run of this very slot in the
-- run history (scored by its end in ms, below the failure state's members
-- at 2^52) that succeeded or found its slot done ("d") counts, so a slot
-- that failed or never ran is never read as completed, and a slot a
-- backfill ran (backfill_finish.lua records its run there, and moves no
-- mark) is, above the mark or below it.
-- A history member is [run, token offset, worker, duration µs, code, …],
-- the code left out for a success (history_member.go); an older member is
-- a JSON object with run_number and outcome.
--
-- Returns 1: completed; 0: not (or no longer known); -6 when the key
-- holds what agora does not write there (another type): nothing is
-- written, and the caller names the key.
local slot = tonumber(ARGV[1])
local mark = redis.pcall('ZSCORE', KEYS[1], 'slot')
if type(mark) == 'table' then -- an error reply: WRONGTYPE
  return -6
end
if mark and tonumber(mark) == slot then
  return 1
end
local head = '[' .. ARGV[1] .. ','
local rows = redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[2], '(4503599627370496')
for _, m in ipairs(rows) do
  if string.sub(m, 1, #head) == head then
    local code = string.match(m, '^%[%-?%d+,%-?%d+,"[^"\\]*",%-?%d+,"([^"\\]*)"')
    if code == nil and string.match(m, '^%[%-?%d+,%-?%d+,"[^"\\]*",%-?%d+%]$') then
      code = 's'
    end
    if code == nil then
      local ok, v = pcall(cjson.decode, m)
      if ok and type(v) == 'table' and #v >= 4 then
        code = v[5]
        if code == nil then code = 's' end
      end
    end
    if code == 's' or code == 'd' then
      return 1
    end
  elseif string.sub(m, 1, 1) == '{' then
    local ok, v = pcall(cjson.decode, m)
    if ok and type(v) == 'table' and tonumber(v['run_number']) == slot
      and (v['outcome'] == 'succeeded' or v['outcome'] == 'slot_done') then
      return 1
    end
  end
end
return 0
