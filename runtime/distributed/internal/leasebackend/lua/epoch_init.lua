-- Make a pipeline's state epoch on a Cluster (see acquire.lua) unless it
-- exists. A worker sends it for its pipelines at start: a pipeline without
-- one is new to this Cluster (or its master lost its data while no worker
-- asked for it since, which nobody alive can tell), so its epoch is 1 and
-- its first slots run. The acquire script, which finds an epoch missing
-- only after a loss, makes it the Redis time instead. Returns the epoch.
--
-- KEYS[1] the pipeline's epoch key
local e = redis.call('GET', KEYS[1])
if not e then
  e = '1'
  redis.call('SET', KEYS[1], e)
end
return tonumber(e)
