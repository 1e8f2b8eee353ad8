-- Start a pipeline's backfill (backfill.go), unless one is running.
--
-- KEYS[1] the backfill hash <prefix>backfill:{<pipeline>}
-- ARGV[1] id   ARGV[2] the request (JSON)   ARGV[3] parallel
-- ARGV[4] how many slots the range holds   ARGV[5] the hash's TTL (ms, 0:
--         none), so that a finished backfill's progress does not stay
--         forever
--
-- Returns 1 when started; 0 when a backfill is running (its id is left as
-- it was); -6 when the key holds what agora does not write there.
local h = KEYS[1]
local state = redis.pcall('HGET', h, 'state')
if type(state) == 'table' then
  return -6
end
if state == 'running' then
  return 0
end
redis.call('DEL', h)
redis.call('HSET', h, 'id', ARGV[1], 'req', ARGV[2], 'state', 'running', 'parallel', ARGV[3],
  'total', ARGV[4], 'done', 0, 'skipped', 0, 'failed', 0, 'consec', 0)
if tonumber(ARGV[5]) > 0 then
  redis.call('PEXPIRE', h, ARGV[5])
end
return 1
