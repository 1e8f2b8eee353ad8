-- Write a worker's registry record and its expiry, atomically.
--
-- KEYS[1] worker record  KEYS[2] the server's state epoch key (absent on a
-- Cluster, where the record and the epoch live in different slots)
-- ARGV[1] record TTL (ms)  ARGV[2..] field, value, field, value ...
--
-- With KEYS[2] the record also gets the field "epoch", the epoch in force,
-- which this call makes (the Redis time in µs) when the state has none:
-- the server is new or lost its data. Returns the epoch, or 0 without one.
local epoch = 0
if KEYS[2] then
  epoch = redis.call('GET', KEYS[2])
  if not epoch then
    local t = redis.call('TIME')
    epoch = string.format('%d', tonumber(t[1]) * 1000000 + tonumber(t[2]))
    redis.call('SET', KEYS[2], epoch)
  end
  redis.call('HSET', KEYS[1], 'epoch', epoch, unpack(ARGV, 2))
else
  redis.call('HSET', KEYS[1], unpack(ARGV, 2))
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return tonumber(epoch)
