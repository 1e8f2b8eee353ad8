-- Summarises one pipeline's run history (its completed sorted set) on the
-- server, so the dashboard's front page learns each pipeline's last
-- outcome, last success and stale refusals without receiving every run:
-- with failing pipelines and long errors the history is kilobytes a run.
--
-- KEYS[1] the completed key; ARGV[1] the lowest score a reader shows (the
-- history floor or the age cut); ARGV[2] the newest runs a reader shows
-- (the history's Limit).
--
-- Returns {runs, newest member, its score, last success's score, stale
-- refusals}, "" where there is none. Members that are not run records are
-- skipped, as the Go reader skips them.
local rows = redis.call('ZREVRANGEBYSCORE', KEYS[1], '+inf', ARGV[1], 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[2]))

-- outcome returns a member's outcome code ("s" for a success), nil when
-- the member is not a run record. The positional array is matched by
-- pattern, which reads only its head; anything else is decoded.
local function outcome(m)
  if string.sub(m, 1, 1) == '[' then
    local code = string.match(m, '^%[%-?%d+,%-?%d+,"[^"\\]*",%-?%d+,"([^"\\]*)"')
    if code then return code end
    if string.match(m, '^%[%-?%d+,%-?%d+,"[^"\\]*",%-?%d+%]$') then return 's' end
  end
  local ok, v = pcall(cjson.decode, m)
  if not ok or type(v) ~= 'table' then return nil end
  if string.sub(m, 1, 1) == '[' then
    if #v < 4 then return nil end
    local c = v[5]
    if c == nil then return 's' end
    if type(c) == 'string' then return c end
    return nil
  end
  local o = v['outcome']
  if o == 'succeeded' then return 's' end
  if o == 'stale' then return 'x' end
  if type(o) == 'string' then return o end
  return nil
end

local runs, newest, newestScore, success, stale = 0, '', '', '', 0
for i = 1, #rows, 2 do
  local code = outcome(rows[i])
  if code then
    runs = runs + 1
    if newest == '' then newest, newestScore = rows[i], rows[i + 1] end
    if code == 's' and success == '' then success = rows[i + 1] end
    if code == 'x' then stale = stale + 1 end
  end
end
return {runs, newest, newestScore, success, stale}
