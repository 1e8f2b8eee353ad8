-- Write a worker's registry record and its expiry, atomically.
--
-- KEYS[1] worker record  KEYS[2] the server's state epoch key (absent on a
-- Cluster, where the record and the epoch live in different slots)
-- ARGV[1] record TTL (ms)
-- with KEYS[2]: ARGV[2] the epoch this worker last saw (µs, 0 for none)
-- ARGV[3] SCAN pattern of the worker records  ARGV[4..] field, value, ...
-- without: ARGV[2..] field, value, ...
--
-- With KEYS[2] the record also gets the field "epoch", the epoch in force
-- (see epoch.go), which this call makes when the state has none or has one
-- older than the worker saw:
--   - none, and the worker saw none: the state is new (or lost while no
--     worker ran, which nobody alive can tell), so nothing was granted from
--     it: the epoch is 1, and every slot may run;
--   - none, or older than the worker saw: the state was lost while this
--     worker ran, so what it held may have been granted: the epoch is the
--     Redis time now, and every other record loses its epoch, so that its
--     worker writes it again (and learns this one) before its next grant.
-- Returns the epoch, or 0 without one.
if not KEYS[2] then
  redis.call('HSET', KEYS[1], unpack(ARGV, 2))
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  return 0
end
local epoch = redis.call('GET', KEYS[2])
local seen = tonumber(ARGV[2])
if not epoch and seen == 0 then
  epoch = '1'
  redis.call('SET', KEYS[2], epoch)
elseif not epoch or tonumber(epoch) < seen then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
  if epoch and now <= tonumber(epoch) then
    now = tonumber(epoch) + 1
  end
  epoch = string.format('%d', now)
  redis.call('SET', KEYS[2], epoch)
  local cursor = '0'
  repeat
    local page = redis.call('SCAN', cursor, 'MATCH', ARGV[3], 'COUNT', 1000)
    cursor = page[1]
    for _, key in ipairs(page[2]) do
      redis.call('HDEL', key, 'epoch')
    end
  until cursor == '0'
end
redis.call('HSET', KEYS[1], 'epoch', epoch, unpack(ARGV, 4))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return tonumber(epoch)
