-- Finds the runs of one pipeline's history that pass a filter, on the
-- server, and answers only their scores (ends, Unix ms): a reader paging
-- through the whole fleet's runs fetches the members of the page alone.
--
-- KEYS[1] the completed key. ARGV:
--   1 the lowest score shown (history floor, age cut or the filter's from)
--   2 the highest score that passes the filter ("+inf": none)
--   3 the page's upper bound, the cursor ("+inf" on the first page)
--   4 how many scores at most to answer
--   5 outcome codes kept, comma-separated ("" keeps any)
--   6 "1": drop successes
--   7 worker id kept ("" keeps any)
--   8 text the error must contain, ASCII lower case ("" keeps any)
--   9 "1": the text reads the same in a member's JSON, so a member that
--     does not contain it is dropped without decoding
--  10 the newest runs a reader shows (the history's Limit)
--
-- Returns {matches in the filter, score, score, ...}: every match is
-- counted, the scores are those at or below the cursor, newest first.
-- Runs are scored below 2^52, where the failure state's members sit
-- (fail.lua), in the same set.
local rows = redis.call('ZREVRANGEBYSCORE', KEYS[1], '(4503599627370496', ARGV[1], 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[10]))
local maxScore = ARGV[2] == '+inf' and math.huge or tonumber(ARGV[2])
local cursor = ARGV[3] == '+inf' and math.huge or tonumber(ARGV[3])
local want = tonumber(ARGV[4])
local codes = {}
for c in string.gmatch(ARGV[5], '[^,]+') do codes[c] = true end
local anyCode = ARGV[5] == ''
local noSuccess, worker, text, plain = ARGV[6] == '1', ARGV[7], ARGV[8], ARGV[9] == '1'

-- fields returns a member's outcome code, worker and error, nil when it is
-- not a run record; the head of the positional array is matched by
-- pattern, the rest decoded only when the error is needed.
local function fields(m, needError)
  if not needError and string.sub(m, 1, 1) == '[' then
    local w, code = string.match(m, '^%[%-?%d+,%-?%d+,"([^"\\]*)",%-?%d+,"([^"\\]*)"')
    if w then return code, w, nil end
    w = string.match(m, '^%[%-?%d+,%-?%d+,"([^"\\]*)",%-?%d+%]$')
    if w then return 's', w, '' end
  end
  local ok, v = pcall(cjson.decode, m)
  if not ok or type(v) ~= 'table' then return nil end
  if string.sub(m, 1, 1) == '[' then
    if #v < 4 or type(v[3]) ~= 'string' then return nil end
    local c = v[5]
    if c == nil then c = 's' end
    if type(c) ~= 'string' then return nil end
    local e = v[11]
    if type(e) ~= 'string' then e = '' end
    return c, v[3], e
  end
  local o = v['outcome']
  if type(o) ~= 'string' then return nil end
  if o == 'succeeded' then o = 's' elseif o == 'failed' then o = 'f' elseif o == 'cancelled' then o = 'c'
  elseif o == 'stale' then o = 'x' elseif o == 'slot_done' then o = 'd' end
  local w, e = v['worker_id'], v['error']
  if type(w) ~= 'string' then w = '' end
  if type(e) ~= 'string' then e = '' end
  return o, w, e
end

local total, out = 0, {}
for i = 1, #rows, 2 do
  local m, score = rows[i], tonumber(rows[i + 1])
  local keep = score <= maxScore
  if keep and text ~= '' and plain and not string.find(string.lower(m), text, 1, true) then keep = false end
  if keep then
    local code, w, e = fields(m, text ~= '')
    keep = code ~= nil
      and (anyCode or codes[code] == true)
      and not (noSuccess and code == 's')
      and (worker == '' or w == worker)
      and (text == '' or string.find(string.lower(e), text, 1, true) ~= nil)
  end
  if keep then
    total = total + 1
    if score <= cursor and #out < want then out[#out + 1] = rows[i + 1] end
  end
end
table.insert(out, 1, total)
return out
