-- Delete a lease if it is still held by this owner with this token.
--
-- KEYS[1] lease
-- ARGV[1] owner  ARGV[2] token
--
-- Returns 1 when deleted, 0 when the lease is gone or held by another.
local v = redis.call('HMGET', KEYS[1], 'owner', 'token')
if v[1] == ARGV[1] and tonumber(v[2]) == tonumber(ARGV[2]) then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
