-- Delete a lease if it is still exactly this owner's, with this token.
--
-- KEYS[1] lease
-- ARGV[1] the lease value "<token> <run> <owner>"
--
-- Returns 1 when deleted, 0 when the lease is gone or held by another.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
