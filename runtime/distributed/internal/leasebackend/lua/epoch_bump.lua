-- Tell whether the coordination state belongs to this server, and move the
-- state epoch on when it may not (see epoch.go). A connection runs it right
-- after it is opened, before any other command.
--
-- KEYS[1] the key naming the server the state was last used on (its
-- run_id)  KEYS[2] the state epoch key
-- ARGV[1] this server's run_id  ARGV[2] SCAN pattern of the worker records
--
-- The run_id changes at every start of a Redis server, so a stored one that
-- differs (or is missing while an epoch exists) says the state came from a
-- file (AOF or RDB, possibly missing the last writes), from a replica
-- promoted after a failover (possibly behind its primary), or from an older
-- agora: leases and completed slots may have gone back in time. The epoch
-- then becomes the Redis time now, and every worker record loses its
-- "epoch" field, so that each worker writes its record again (and learns
-- the new epoch) before its next grant. A state with neither key is new or
-- empty: the first heartbeat makes its epoch.
--
-- Returns {moved (0 or 1), epoch (µs, 0 when none yet)}.
local known = redis.call('GET', KEYS[1])
if known == ARGV[1] then
  local e = redis.call('GET', KEYS[2])
  return {0, e and tonumber(e) or 0}
end
redis.call('SET', KEYS[1], ARGV[1])
local e = redis.call('GET', KEYS[2])
if not e then
  return {0, 0}
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
if now <= tonumber(e) then
  now = tonumber(e) + 1
end
redis.call('SET', KEYS[2], string.format('%d', now))
local cursor = '0'
repeat
  local page = redis.call('SCAN', cursor, 'MATCH', ARGV[2], 'COUNT', 1000)
  cursor = page[1]
  for _, key in ipairs(page[2]) do
    redis.call('HDEL', key, 'epoch')
  end
until cursor == '0'
return {1, now}
