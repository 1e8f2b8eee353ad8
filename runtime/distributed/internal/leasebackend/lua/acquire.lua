-- Acquire pipelines' leases and mint their fencing tokens, atomically: one
-- call decides a whole batch of requests, each exactly as if it came alone.
--
-- ARGV[1] owner "<worker id>#<hex>" (unique per coordinator instance)
-- ARGV[2] lease TTL (ms)  ARGV[3] state TTL (ms, 0 keeps)
-- ARGV[4] worker record key prefix ('' turns takeover off)
-- ARGV[5] this worker's record key ('' on a Cluster, whose scripts cannot
-- reach it)  ARGV[6] worker record TTL (ms) when the grant must refresh the
-- record, 0 when a write of it went through recently enough (see
-- beginAcquire)
-- ARGV[7..] one requested run number per request: > 0 slot, 0 auto, -1 once;
-- a slot followed by "r" asks to re-run a slot whose holder died (see below),
-- one followed by "a" is asked ahead of its boundary (lease-ahead, see
-- ahead.go; never together with "r"); a number > 0 followed by "c" is a
-- counted run (runtime.RunCounted), not a slot: no slot rule applies to it
-- (completed slot, epoch, clock), only one holder and a rising token
-- KEYS, per request in order: lease, last fencing token, last completed slot
-- (sorted set, member "slot"; see keys.go), the pipeline's backfill hash
-- (see "Backfill slots" below; on one server not for a request with "a"),
-- then on one server the once
-- marker for a once request (run number -1) only; without a record key
-- (ARGV[5] '', a Cluster) always the once marker and the pipeline's state
-- epoch.
--
-- The lease is a list holding the one string "<token> <run> <owner>", with a
-- PX expiry; run is the slot, or the token itself for auto and once. A list,
-- so that release is a plain LREM: an atomic compare-and-delete on owner and
-- token that needs no script (see release.go).
--
-- The state epoch (see epoch.go) is the Redis time in µs from which this
-- server's coordination state is known to be whole: a slot scheduled before
-- it may have been granted in state that was since lost, and is refused; a
-- lease granted before it is never taken over, since its holder's record
-- may have been lost with that state. On one server the epoch comes from
-- this worker's own record (field "epoch", written by the heartbeat from the
-- server's epoch key and cleared when the epoch moves), which every grant
-- requires: a record missing, or written under an older epoch, is refused
-- until the worker writes it again. On a Cluster each pipeline keeps its own
-- epoch key, made here when missing.
--
-- Returns one integer per request, alone for a single request and as an
-- array for several: the token (> 0) when acquired, 0 when another owner
-- holds the lease, -1 when the slot already completed, -2 when this
-- worker's record is missing or older than the epoch (it must register
-- first), -3 when the slot is older than the epoch (possibly done), and
-- -<slot> (below -3) for a request with "r" that would take over the lease
-- of an earlier slot whose holder died before completing it: nothing is
-- granted, and the worker asks for that slot instead, to re-run it; and
-- -4 for a request with "a" that decided nothing: it came more than lead
-- before its slot by the server's clock, or found the lease held for an
-- earlier run (a run of the previous slot still going), and the worker asks
-- again at the boundary; -5 for a slot more than lead after the server's
-- time, asked without "a" (the asking worker's clock is ahead): refused;
-- -6 when the pipeline's lease or token key holds what agora does not
-- write there (another type, or a value that does not parse, such as a
-- token too large for a Lua number): nothing is granted and the value is
-- left as it was, never replaced by a wrapped number.
-- A pipeline with failed runs recorded (fail.lua)
-- answers a string instead: "b <count> <ms>" refused while backing off,
-- "s <count>" refused because it stopped, "g <token> <count>" granted.
--
-- Lease-ahead and the epoch: an "a" request is granted only from lead
-- before its slot by the server's clock, so every grant of a slot is issued
-- at a Redis time of at least slot - lead. A loss of state after such a
-- grant moves the epoch to a Redis time after it, which may still be before
-- the slot; so a slot is refused as possibly granted in lost state when
-- slot - lead < epoch, not only when slot < epoch.
--
-- Each redis.call costs about as much as a command a client sends, and each
-- script call several, so a batch shares what its requests have in common
-- (the script call, the clock, the record read, a holder's record), a
-- refusal is decided by reads alone, before any token is minted (a lease
-- held by a live owner: LINDEX; a completed slot: LINDEX and ZSCORE), and a
-- grant writes only what it must.
--
-- Backfill slots (backfill_claim.lua, backfill_finish.lua): a slot a
-- backfill holds ("f:<slot>" in its hash) or completed above the completed
-- slot ("c:<slot>") is the backfill's, and refused to the schedule as
-- completed (-1), so that a retry of a failed slot, a late run or a
-- catch-up never runs it a second time. The claim in turn waits while the
-- schedule's lease names the slot. The hash is read only while the
-- completed key's member "backfill" says it may hold such slots (the
-- claim adds it, backfill_finish.lua and backfill_start.lua remove it when
-- none is left), so a pipeline without a backfill pays nothing; and a
-- request asked ahead of a slot that has not begun by the server's clock
-- skips the read: no backfill may claim a slot before it begins. On one
-- server such a request comes without the hash's key, and one that finds
-- its slot begun while the member is there decides nothing (-4): the
-- worker asks again at the boundary, with the key.
local owner = ARGV[1]
local keyttl = tonumber(ARGV[3])
local registry = ARGV[4]
local ownRecord = ARGV[5]
local alive = nil -- holder worker id -> its record exists, made when needed
local now = nil -- Redis time in µs, read at the first grant
local epoch = nil -- from this worker's record: µs, or false when missing
-- The longest lease-ahead in µs: MaxLeaseAhead (ahead.go), which a test
-- keeps equal to this.
local lead = 250000
-- The band the failure state's scores sit above (fail.lua).
local failBand = 4503599627370496

-- One pass per request. The body is inline, not a function, and each
-- refusal leaves its pass with break (repeat … until true): a closure or
-- table made per call costs the server more than the code it saves.
local single = #ARGV == 7
local out = nil
local k = 1
for i = 7, #ARGV do
  local arg = ARGV[i]
  local flag = string.byte(arg, -1)
  local rerun = flag == 114 -- 'r'
  local early = flag == 97 -- 'a'
  -- [run kinds] a counted run ('c') is no slot: slot is false for it.
  local counted = flag == 99 -- 'c'
  if rerun or early or counted then
    arg = string.sub(arg, 1, -2)
  end
  local mode = tonumber(arg)
  local slot = mode > 0 and not counted
  -- [/run kinds]
  local lease, tokenKey, doneKey = KEYS[k], KEYS[k + 1], KEYS[k + 2]
  local bfKey, onceKey, epochKey = nil, nil, nil
  if ownRecord == '' then
    bfKey, onceKey, epochKey = KEYS[k + 3], KEYS[k + 4], KEYS[k + 5]
    k = k + 6
  elseif mode == -1 then
    bfKey, onceKey = KEYS[k + 3], KEYS[k + 4]
    k = k + 5
  elseif early then
    k = k + 3
  else
    bfKey = KEYS[k + 3]
    k = k + 4
  end
  local reply = 0
  repeat
    local held = redis.pcall('LINDEX', lease, 0)
    if type(held) == 'table' then -- an error reply
      if string.find(held.err, 'WRONGTYPE', 1, true) ~= 1 then
        return held -- any other error fails the call, as redis.call would
      end
      reply = -6 -- not a list
      break
    end
    local heldToken = nil -- set when a dead owner's lease would be taken over
    local heldRun = nil
    if held then
      local token, hrun, holder = string.match(held, '^(%d+) (%-?%d+) (.*)$')
      if not holder or #token > 16 then
        reply = -6
        break
      end
      -- A lease held by this very owner is one whose reply was lost (a
      -- retried command) or that the owner already gave up locally: the
      -- owner does not ask while it believes it holds one, so it may take
      -- it again.
      if holder ~= owner then
        -- Another owner's lease is taken over only once that owner's
        -- registry record is gone: it gave the lease up locally before the
        -- record could expire (see takeover.go).
        local worker = registry ~= '' and string.match(holder, '^(.*)#%x+$')
        if not worker then
          if early and tonumber(hrun) < mode then
            reply = -4 -- an earlier run's lease: ask again at the boundary
          end
          break
        end
        alive = alive or {}
        local live = alive[worker]
        if live == nil then
          live = redis.call('EXISTS', registry .. worker) == 1
          alive[worker] = live
        end
        if live then
          if early and tonumber(hrun) < mode then
            reply = -4
          end
          break
        end
        heldToken, heldRun = tonumber(token), tonumber(hrun)
      end
    end

    -- The slot rule, read only for a lease that is free (or this owner's):
    -- a lease held by another is refused the same either way. The same
    -- ZMSCORE reads the fleet's failure state (fail.lua).
    local done = nil
    local fails, failUntil = nil, nil
    local backfilled = nil
    if slot then
      local z
      if bfKey then
        z = redis.call('ZMSCORE', doneKey, 'slot', 'fails', 'fail_until', 'backfill')
        backfilled = z[4]
      else
        z = redis.call('ZMSCORE', doneKey, 'slot', 'fails', 'fail_until')
      end
      done, fails, failUntil = z[1], z[2], z[3]
      done = done and tonumber(done)
      if done and mode <= done then
        reply = -1
        break
      end
    else
      if mode == -1 and redis.call('EXISTS', onceKey) == 1 then
        reply = -1
        break
      end
      local z = redis.call('ZMSCORE', doneKey, 'fails', 'fail_until')
      fails, failUntil = z[1], z[2]
    end

    -- >>> Fleet-wide failure state (fail.lua, failures.go): while the
    -- pipeline backs off after a failed run anywhere in the fleet, the
    -- lease is refused with "b <count> <ms left>"; once the count reached
    -- the maximum, with "s <count>"; a grant to a failing pipeline answers
    -- "g <token> <count>", so that its success clears the state.
    local failing = nil
    if fails and failUntil then
      failing = tonumber(fails) - failBand
      local untilMs = tonumber(failUntil) - failBand
      if untilMs <= 0 then
        reply = 's ' .. string.format('%d', failing)
        break
      end
      if not now then
        local t = redis.call('TIME')
        now = tonumber(t[1]) * 1000000 + tonumber(t[2])
      end
      local left = untilMs - math.floor(now / 1000)
      if left > 0 then
        reply = 'b ' .. string.format('%d', failing) .. ' ' .. string.format('%d', left)
        break
      end
    end
    -- <<< Fleet-wide failure state

    -- The epoch. On one server it comes with the check that this worker's
    -- record exists, which a grant needs (a contender must not find it
    -- missing and take the lease over while this worker runs); the record
    -- is refreshed too when the worker has not written it lately.
    local e
    if epochKey then
      e = redis.call('GET', epochKey)
      if e then
        e = tonumber(e)
      else
        local t = redis.call('TIME')
        e = tonumber(t[1]) * 1000000 + tonumber(t[2])
        redis.call('SET', epochKey, string.format('%d', e))
      end
    else
      if epoch == nil then
        local v = redis.call('HGET', ownRecord, 'epoch')
        epoch = v and tonumber(v) or false
        if epoch and ARGV[6] ~= '0' then
          redis.call('PEXPIRE', ownRecord, ARGV[6])
        end
      end
      if not epoch then
        reply = -2
        break
      end
      e = epoch
    end
    if heldToken and heldToken < e then
      -- Granted before the state was lost: its holder's record may be gone
      -- with that state while the holder still runs.
      if early and heldRun < mode then
        reply = -4
      end
      break
    end
    if slot and mode * 1000000 - lead < e then
      reply = -3
      break
    end
    if rerun and heldToken and heldRun > 0 and heldRun < mode and (not done or heldRun > done) then
      -- The dead holder's slot never completed: the worker re-runs it
      -- first (its epoch holds, since heldToken >= e).
      reply = -heldRun
      break
    end

    -- Tokens are max(last + 1, Redis time in µs); see fencing.go. The
    -- clock is usually ahead, so the token is written before the last one
    -- is known, and fixed in the rare case it is not. One clock reading
    -- serves the batch, moved on a microsecond per grant, so the grants of
    -- one call still get distinct tokens, as separate calls would.
    if not now then
      local t = redis.call('TIME')
      now = tonumber(t[1]) * 1000000 + tonumber(t[2])
    else
      now = now + 1
    end
    if early and mode * 1000000 - lead > now then
      -- Asked too early by the server's clock (the worker's clock leads):
      -- granting now would break the epoch rule's bound.
      reply = -4
      break
    end
    -- [clock skew] Nor is any other ask for a slot further ahead of the
    -- server's clock: a worker whose clock leads asks for slots that have
    -- not begun, and a grant (with its completion) would refuse the
    -- earlier slots the others still have to run.
    if slot and mode * 1000000 - lead > now then
      reply = -5
      break
    end
    -- [/clock skew]
    -- [backfill slots] See the top of this file.
    if early and not bfKey and now >= mode * 1000000 and redis.call('ZSCORE', doneKey, 'backfill') then
      -- Asked ahead, but the slot has begun and a backfill may hold it:
      -- this request came without the hash, so it decides nothing.
      reply = -4
      break
    end
    if backfilled and (not early or now >= mode * 1000000) then
      local b = redis.pcall('HMGET', bfKey, 'f:' .. arg, 'c:' .. arg)
      if b.err then
        if string.find(b.err, 'WRONGTYPE', 1, true) ~= 1 then
          return b
        end
        reply = -6
        break
      end
      -- A slot in flight whose lease expired is not held: its holder gave
      -- it up by its renewal deadline (a running backfill hands it out
      -- again unless this lease then names it; a cancelled one never).
      local exp = b[1] and string.match(b[1], '^%d+ (%d+) ')
      if b[2] or (b[1] and (not exp or tonumber(exp) * 1000 >= now)) then
        reply = -1
        break
      end
    end
    -- [/backfill slots]
    -- The token key holds "<token> <run>": the run lets a worker that
    -- deferred its request see with one MGET that the slot was granted
    -- (see preference.go). An older "<token>" alone reads the same.
    local token = now
    local text = string.format('%d', token)
    local run = arg
    if mode <= 0 then
      run = text
    end
    local last
    if keyttl > 0 then
      last = redis.pcall('SET', tokenKey, text .. ' ' .. run, 'PX', keyttl, 'GET')
    else
      last = redis.pcall('SET', tokenKey, text .. ' ' .. run, 'GET')
    end
    if type(last) == 'table' then -- an error reply
      if string.find(last.err, 'WRONGTYPE', 1, true) ~= 1 then
        return last -- OOM, READONLY, …: fails the call, as redis.call would
      end
      reply = -6 -- not a string
      break
    end
    -- A token has at most 16 digits (µs until the year 2255), below 2^53
    -- where Lua's numbers stop being exact: a longer one is not agora's,
    -- and goes back as it was.
    if last then
      local digits = string.match(last, '^(%d+)$') or string.match(last, '^(%d+) %-?%d+$')
      if not digits or #digits > 16 then
        redis.call('SET', tokenKey, last, 'KEEPTTL')
        reply = -6
        break
      end
      last = tonumber(digits)
    end
    if last and last >= token then
      token = last + 1
      text = string.format('%d', token)
      if mode <= 0 then
        run = text
      end
      redis.call('SET', tokenKey, text .. ' ' .. run, 'KEEPTTL')
    end
    local value = text .. ' ' .. run .. ' ' .. owner

    if held then
      redis.call('LSET', lease, 0, value)
    else
      redis.call('RPUSH', lease, value)
    end
    redis.call('PEXPIRE', lease, ARGV[2])

    if keyttl > 0 then
      redis.call('PEXPIRE', doneKey, keyttl)
    end
    reply = token
    if failing then
      reply = 'g ' .. text .. ' ' .. string.format('%d', failing)
    end
  until true
  if single then
    return reply -- one integer: the cheapest reply
  end
  out = out or {}
  out[#out + 1] = reply
end
return out
