-- Write a worker's registry record and its expiry, atomically.
--
-- KEYS[1] worker record
-- ARGV[1] record TTL (ms)  ARGV[2..] field, value, field, value ...
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
