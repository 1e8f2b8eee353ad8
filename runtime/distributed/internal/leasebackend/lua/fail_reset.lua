-- Clear a pipeline's fleet-wide failure state if it says the pipeline
-- stopped: a worker starting anew begins a new count, as a restarted
-- process does. A count still below the maximum is kept, so a replica
-- joining (or restarted during) a streak of failures does not reset it.
--
-- KEYS[1] last completed slot (sorted set)  KEYS[2] failure record
-- Returns 1 when it cleared a stopped state, else 0.
local band = 4503599627370496
local u = redis.call('ZSCORE', KEYS[1], 'fail_until')
if not u or tonumber(u) ~= band then
  return 0
end
redis.call('ZREM', KEYS[1], 'fails', 'fail_until')
redis.call('DEL', KEYS[2])
return 1
