-- Renew, or finish, a backfill slot a replica holds (backfill.go).
--
-- KEYS[1] the backfill hash <prefix>backfill:{<pipeline>}
-- ARGV[1] owner   ARGV[2] the backfill's id   ARGV[3] slot (Unix s)
-- ARGV[4] token   ARGV[5] what to do: 'r' renew for ARGV[6] ms; 'd' done,
--         's' skipped (it had completed before), 'f' failed, 'x' given
--         back uncounted (its backfill was cancelled before it ran)
-- ARGV[6] renew: the TTL (ms); failed: the error text
-- ARGV[7] failed: how many failed slots in a row stop the backfill (0:
--         never)   ARGV[8] failed: how many failed slots keep their error
-- KEYS[2] and ARGV[9], ARGV[10] when finishing a slot that ran: the
--         pipeline's completed key, and the run's history member and its
--         score (history_member.go), added in the same step, so that a
--         slot counted done is one the run history (SlotCompleted) knows
--
-- A slot is the owner's while its field "f:<slot>" holds its token and
-- owner. Renewing extends its expiry; finishing removes it and counts it.
-- A cancelled backfill still renews and counts its slots in flight, so
-- they finish rather than stop half written.
--
-- Returns 1 when done as asked; 0 when the slot is not (or no longer)
-- this owner's under this token: it expired and was handed out again, or
-- the backfill is gone.
local h = KEYS[1]
local id = redis.pcall('HGET', h, 'id')
if type(id) == 'table' or id ~= ARGV[2] then
  return 0
end
local field = 'f:' .. ARGV[3]
local held = redis.call('HGET', h, field)
if not held then
  return 0
end
local tok, _, owner = string.match(held, '^(%d+) (%d+) (.*)$')
if tok ~= ARGV[4] or owner ~= ARGV[1] then
  return 0
end
local t = redis.call('TIME')
local nowMs = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local op = ARGV[5]
if op == 'r' then
  redis.call('HSET', h, field, string.format('%s %d %s', tok, nowMs + tonumber(ARGV[6]), owner))
  return 1
end
redis.call('HDEL', h, field)
if op ~= 'x' and ARGV[9] and ARGV[9] ~= '' then
  redis.call('ZADD', KEYS[2], ARGV[10], ARGV[9])
end
-- The slot completed: above the completed slot, it is marked so that the
-- schedule is refused it (acquire.lua); at or below it, the completed slot
-- refuses it already. With no slot in flight and none marked above the
-- completed slot left, the schedule need not read the hash any more.
local mark = redis.pcall('ZSCORE', KEYS[2], 'slot')
if type(mark) == 'table' then
  mark = nil -- not agora's: the acquire script says so
end
mark = mark and tonumber(mark)
if (op == 'd' or op == 's') and (not mark or mark < tonumber(ARGV[3])) then
  redis.call('HSET', h, 'c:' .. ARGV[3], '1')
end
local inflight, needed = false, false
local fields = redis.call('HKEYS', h)
for _, k in ipairs(fields) do
  local p = string.sub(k, 1, 2)
  if p == 'f:' then
    inflight, needed = true, true
    break
  end
  if p == 'c:' and (not mark or tonumber(string.sub(k, 3)) > mark) then
    needed = true
  end
end
if not needed then
  redis.pcall('ZREM', KEYS[2], 'backfill')
end
if op == 'x' then
  return 1
end
local state = redis.call('HGET', h, 'state')
if op == 'd' then
  redis.call('HINCRBY', h, 'done', 1)
  redis.call('HSET', h, 'consec', 0)
elseif op == 's' then
  redis.call('HINCRBY', h, 'skipped', 1)
  redis.call('HSET', h, 'consec', 0)
else
  local n = redis.call('HINCRBY', h, 'failed', 1)
  local c = redis.call('HINCRBY', h, 'consec', 1)
  if n <= tonumber(ARGV[8]) then
    redis.call('HSET', h, 'e:' .. ARGV[3], ARGV[6])
  end
  local max = tonumber(ARGV[7])
  if state == 'running' and max > 0 and c >= max then
    redis.call('HSET', h, 'state', 'failed', 'end', nowMs)
    return 1
  end
end
if state == 'running' and not inflight and redis.call('HGET', h, 'exhausted') == '1' then
  redis.call('HSET', h, 'state', 'done', 'end', nowMs)
end
return 1
