-- Record a failed run in its pipeline's fleet-wide failure state and give
-- its lease back, atomically: no replica can find the lease free before
-- the backoff the failure starts is in place, so no two replicas retry.
--
-- KEYS[1] lease  KEYS[2] last completed slot (sorted set; see keys.go)
-- KEYS[3] failure record (hash: error, worker, at)
-- ARGV[1] the lease's value "<token> <run> <owner>"
-- ARGV[2] first backoff (ms)  ARGV[3] longest backoff (ms)
-- ARGV[4] max consecutive errors (0: never stops)
-- ARGV[5] the run's error text  ARGV[6] worker id  ARGV[7] state TTL (ms, 0 keeps)
--
-- The count and the backoff deadline are members of the completed-slot set
-- ("fails" and "fail_until"), so the acquire script reads them with the
-- slot, in the one ZMSCORE it sends anyway; both are scored above a band
-- (2^52) that no slot or run record reaches. "fail_until" is the deadline
-- in Redis time (Unix ms), or the band itself once the count reached the
-- maximum: the pipeline stopped.
--
-- The failure is recorded only when the lease was still this run's, or is
-- free: a lease another run holds now belongs to that run's outcome.
--
-- Returns {released (1/0), count, backoff ms, or -1 when stopped}; the
-- count is 0 when nothing was recorded.
local band = 4503599627370496
local released = redis.call('LREM', KEYS[1], 1, ARGV[1])
if released == 0 and redis.call('EXISTS', KEYS[1]) == 1 then
  return {0, 0, 0}
end
local c = redis.call('ZSCORE', KEYS[2], 'fails')
local count = 1
if c then
  count = tonumber(c) - band + 1
end
local t = redis.call('TIME')
local nowMs = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit = tonumber(ARGV[4])
local wait = -1
local untilScore = band
if limit == 0 or count < limit then
  wait = tonumber(ARGV[2])
  local cap = tonumber(ARGV[3])
  for _ = 2, count do
    if wait >= cap then
      break
    end
    wait = wait * 2
  end
  if wait > cap then
    wait = cap
  end
  untilScore = band + nowMs + wait
end
redis.call('ZADD', KEYS[2], band + count, 'fails', untilScore, 'fail_until')
redis.call('HSET', KEYS[3], 'error', ARGV[5], 'worker', ARGV[6], 'at', string.format('%d', nowMs))
local ttl = tonumber(ARGV[7])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[2], ttl)
  redis.call('PEXPIRE', KEYS[3], ttl)
end
return {released, count, wait}
