-- Make a pipeline's state epoch on a Cluster (see acquire.lua) unless it
-- exists: the Redis time in µs. A worker sends it for its pipelines at
-- start, so that a pipeline's first slots are not taken for slots of lost
-- state. Returns the epoch.
--
-- KEYS[1] the pipeline's epoch key
local e = redis.call('GET', KEYS[1])
if not e then
  local t = redis.call('TIME')
  e = string.format('%d', tonumber(t[1]) * 1000000 + tonumber(t[2]))
  redis.call('SET', KEYS[1], e)
end
return tonumber(e)
