-- Extend a lease if it is still exactly this owner's, with this token.
--
-- KEYS[1] lease (a list holding its one value)
-- ARGV[1] the lease value "<token> <run> <owner>"  ARGV[2] lease TTL (ms)
--
-- Returns 1 when extended, 0 when the lease is gone or held by another.
if redis.call('LINDEX', KEYS[1], 0) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
