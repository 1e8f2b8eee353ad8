-- Hand a replica the next slot of a pipeline's backfill (backfill.go).
--
-- KEYS[1] the backfill hash <prefix>backfill:{<pipeline>}
-- KEYS[2] the pipeline's token key (see acquire.lua)
-- KEYS[3] the pipeline's lease key, KEYS[4] its completed key (see
--         acquire.lua)
-- ARGV[1] owner "<worker id>#<hex>"   ARGV[2] slot lease TTL (ms)
-- ARGV[3] the backfill's id           ARGV[4] the cursor the replica read
--         ('' before the first slot)  ARGV[5] the slot after that cursor
--         by the schedule (Unix s; '' when none is left in the range)
-- ARGV[6] the token key's TTL (ms, 0 keeps)
-- ARGV[7] how long the hash stays after its last slot was handed out (ms)
--
-- The hash holds the request ("id", "state", "parallel"), the cursor (the
-- last slot handed out), the counts, and one field "f:<slot>" per slot in
-- flight: "<token> <expiry ms> <owner>". The slot after the cursor is
-- computed by the replica from the schedule, which Lua cannot; the script
-- moves the cursor only if it is still the one the replica read, so two
-- replicas never hand out one slot twice.
--
-- Returns {kind, slot, token}:
--   'slot'   the next slot is this owner's, under token
--   'again'  a slot in flight whose lease expired (its holder died or
--            stopped) is this owner's now, under a new token
--   'busy'   parallel slots are in flight
--   'held'   the next slot is not handed out yet: the schedule's lease
--            names it (a scheduled run of the slot, a retry or a catch-up,
--            is running it: the claim waits for its end, after which the
--            slot has completed or may be backfilled), or it has not begun
--            by the server's clock. acquire.lua refuses the schedule a
--            slot once it is handed out.
--   'moved'  the cursor is not the one read; slot is the cursor now
--   'wait'   no slot is left but some are in flight
--   'end'    no slot is left and none is in flight: the backfill is done
--   'gone'   no such backfill running (another id, or not running)
--   'foreign' a key holds what agora does not write there
local h = KEYS[1]
local f = redis.pcall('HGETALL', h)
if type(f) == 'table' and f.err then
  return {'foreign', 0, 0}
end
local v = {}
for i = 1, #f, 2 do
  v[f[i]] = f[i + 1]
end
if v['id'] ~= ARGV[3] or v['state'] ~= 'running' then
  return {'gone', 0, 0}
end
local t = redis.call('TIME')
local nowUs = tonumber(t[1]) * 1000000 + tonumber(t[2])
local nowMs = math.floor(nowUs / 1000)
local ttl = tonumber(ARGV[2])

-- mint returns a token: max(last + 1, Redis time in µs), written back with
-- the run the token key already names, so that a replica that deferred a
-- scheduled slot's request still reads its own slot there.
local function mint()
  local last = redis.pcall('GET', KEYS[2])
  if type(last) == 'table' then
    return nil
  end
  local token = nowUs
  local run = nil
  if last then
    local digits, r = string.match(last, '^(%d+) (%-?%d+)$')
    if not digits then
      digits = string.match(last, '^(%d+)$')
    end
    if not digits or #digits > 16 then
      return nil
    end
    run = r
    if tonumber(digits) >= token then
      token = tonumber(digits) + 1
    end
  end
  local text = string.format('%d', token)
  local value = text .. ' ' .. (run or text)
  if tonumber(ARGV[6]) > 0 then
    redis.call('SET', KEYS[2], value, 'PX', ARGV[6])
  else
    redis.call('SET', KEYS[2], value, 'KEEPTTL')
  end
  return token
end

-- The slot the schedule's lease names, if any, is not handed out, again
-- or for the first time: its run, a retry or a catch-up, is going.
local scheduled = redis.pcall('LINDEX', KEYS[3], 0)
if type(scheduled) == 'table' then
  return {'foreign', 0, 0}
end
scheduled = scheduled and string.match(scheduled, '^%d+ (%-?%d+) ')

local inflight = 0
for k, val in pairs(v) do
  if string.sub(k, 1, 2) == 'f:' then
    local tok, exp = string.match(val, '^(%d+) (%d+) ')
    if not tok then
      return {'foreign', 0, 0}
    end
    if tonumber(exp) < nowMs and string.sub(k, 3) ~= scheduled then
      local token = mint()
      if not token then
        return {'foreign', 0, 0}
      end
      redis.call('HSET', h, k, string.format('%d %d %s', token, nowMs + ttl, ARGV[1]))
      redis.call('PEXPIRE', h, ARGV[7])
      return {'again', tonumber(string.sub(k, 3)), token}
    end
    inflight = inflight + 1
  end
end
if inflight >= tonumber(v['parallel'] or '1') then
  return {'busy', 0, 0}
end
local cursor = v['cursor'] or ''
if cursor ~= ARGV[4] then
  return {'moved', tonumber(cursor) or 0, 0}
end
if ARGV[5] == '' then
  if inflight > 0 then
    redis.call('HSET', h, 'exhausted', '1')
    return {'wait', 0, 0}
  end
  redis.call('HSET', h, 'state', 'done', 'end', nowMs, 'exhausted', '1')
  return {'end', 0, 0}
end
if tonumber(ARGV[5]) * 1000 > nowMs then
  return {'held', tonumber(ARGV[5]), 0}
end
if scheduled == ARGV[5] then
  return {'held', tonumber(ARGV[5]), 0}
end
local token = mint()
if not token then
  return {'foreign', 0, 0}
end
-- Above the completed slot, the schedule must read this hash before it
-- grants the slot (acquire.lua).
local mark = redis.pcall('ZSCORE', KEYS[4], 'slot')
if type(mark) == 'table' then
  return {'foreign', 0, 0}
end
if not mark or tonumber(mark) < tonumber(ARGV[5]) then
  redis.call('ZADD', KEYS[4], 4503599627370496, 'backfill')
end
redis.call('HSET', h, 'cursor', ARGV[5], 'f:' .. ARGV[5], string.format('%d %d %s', token, nowMs + ttl, ARGV[1]))
redis.call('PEXPIRE', h, ARGV[7])
return {'slot', tonumber(ARGV[5]), token}
