//! The Lua scripts behind every Redis operation (Redis runs a script atomically), with the
//! keys and arguments each takes. A script names only keys of one hash slot on a cluster:
//! the quota keys (`usage`, `total`) are passed only on one server, where they sit beside
//! everything else; on a cluster the quota is charged by [`Scripts::charge`] on its own
//! slot, before the write and refunded after it (see `super::keys`). What must not live
//! here: key names and connections.

use crate::state_store::ENTRY_OVERHEAD;

pub(super) struct Scripts {
    pub set: redis::Script,
    pub delete: redis::Script,
    pub reserve: redis::Script,
    pub spent: redis::Script,
    pub settle: redis::Script,
    pub bind: redis::Script,
    pub settle_orphan: redis::Script,
    /// A cluster's quota charge: KEYS usage, usage total; ARGV plugin, delta, plugin quota,
    /// total quota. Returns `{0, 0}` when charged, `{2|3, held}` when refused.
    pub charge: redis::Script,
}

const PRUNE_AND_TOTAL: &str = r"
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function total(buckets, reservations, oldest)
  local sum = 0
  local b = redis.call('HGETALL', buckets)
  for i = 1, #b, 2 do
    if tonumber(b[i]) < oldest then redis.call('HDEL', buckets, b[i])
    else sum = sum + tonumber(b[i + 1]) end
  end
  local r = redis.call('HGETALL', reservations)
  for i = 1, #r, 2 do
    local bucket, amount = string.match(r[i + 1], '^(%d+):(%d+)$')
    if tonumber(bucket) < oldest then redis.call('HDEL', reservations, r[i])
    else sum = sum + tonumber(amount) end
  end
  return sum
end
";

impl Scripts {
    pub fn new() -> Self {
        let with_total = |body: &str| redis::Script::new(&format!("{PRUNE_AND_TOTAL}{body}"));
        Scripts {
            // KEYS: pad, bytes[, usage, usage total]. ARGV: key, value, cap, plugin, plugin
            // quota, total quota. Each entry counts ENTRY_OVERHEAD bytes beyond its key and
            // value. Returns {1 | 0 (over the cap) | 2 | 3 (over a quota), the pad's bytes,
            // the bytes the replaced entry counted}.
            set: redis::Script::new(&format!(
                r"{CHARGE}
local old = redis.call('HGET', KEYS[1], ARGV[1])
local oldlen = 0
if old then oldlen = string.len(ARGV[1]) + string.len(old) + {ENTRY_OVERHEAD} end
local newlen = string.len(ARGV[1]) + string.len(ARGV[2]) + {ENTRY_OVERHEAD}
local total = math.max(0, tonumber(redis.call('GET', KEYS[2]) or '0') - oldlen) + newlen
if total > tonumber(ARGV[3]) then return {{0, total, oldlen}} end
if #KEYS >= 4 then
  local refused, held = charge(KEYS[3], KEYS[4], ARGV[4], newlen - oldlen, ARGV[5], ARGV[6])
  if refused then return {{refused, held, oldlen}} end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('SET', KEYS[2], total)
return {{1, total, oldlen}}
"
            )),
            // KEYS: pad, bytes[, usage, usage total]. ARGV: key, plugin. Returns the bytes
            // freed.
            delete: redis::Script::new(&format!(
                r"{CHARGE}
local old = redis.call('HGET', KEYS[1], ARGV[1])
if not old then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
local freed = string.len(ARGV[1]) + string.len(old) + {ENTRY_OVERHEAD}
local left = redis.call('DECRBY', KEYS[2], freed)
if left < 0 then redis.call('SET', KEYS[2], 0) end
if #KEYS >= 4 then charge(KEYS[3], KEYS[4], ARGV[2], -freed, 0, 0) end
return freed
"
            )),
            // KEYS: buckets, reservations, budget set, id counter, owner's list[, usage,
            // usage total]. ARGV: amount, limit, window ms, bucket width ms, budget name, max
            // budget keys, budget base, plugin, plugin quota, total quota, a new key's bytes,
            // `1` when those bytes are charged already (a cluster). Returns {state, total,
            // id, whether the budget key was added}: state 1 granted, 0 over the limit, -1
            // too many keys, -2/-3 over a quota, -4 a new key whose bytes must be charged
            // first (a cluster).
            reserve: with_total(&format!(
                r"{CHARGE}
local now = now_ms()
local width = tonumber(ARGV[4])
local oldest = math.floor((now - tonumber(ARGV[3])) / width)
local added = 0
if redis.call('SISMEMBER', KEYS[3], ARGV[5]) == 0 then
  if redis.call('SCARD', KEYS[3]) >= tonumber(ARGV[6]) then return {{-1, 0, 0, 0}} end
  if #KEYS >= 7 then
    local refused, held = charge(KEYS[6], KEYS[7], ARGV[8], tonumber(ARGV[11]), ARGV[9], ARGV[10])
    if refused then return {{-refused, held, 0, 0}} end
  elseif ARGV[12] ~= '1' then
    return {{-4, 0, 0, 0}}
  end
  redis.call('SADD', KEYS[3], ARGV[5])
  added = 1
end
local sum = total(KEYS[1], KEYS[2], oldest)
local amount = tonumber(ARGV[1])
if sum + amount > tonumber(ARGV[2]) then return {{0, sum, 0, added}} end
local id = redis.call('INCR', KEYS[4])
redis.call('HSET', KEYS[2], id, math.floor(now / width) .. ':' .. ARGV[1])
redis.call('HSET', KEYS[5], id .. ':' .. ARGV[7], '0')
local keep = tonumber(ARGV[3]) + 2 * width
redis.call('PEXPIRE', KEYS[1], keep)
redis.call('PEXPIRE', KEYS[2], keep)
return {{1, sum + amount, id, added}}
"
            )),
            // KEYS: buckets, reservations. ARGV: window ms, bucket width ms.
            spent: with_total(
                r"
local oldest = math.floor((now_ms() - tonumber(ARGV[1])) / tonumber(ARGV[2]))
return total(KEYS[1], KEYS[2], oldest)
",
            ),
            // KEYS: buckets, reservations, owner's list. ARGV: id, commit (1/0), owned field.
            settle: redis::Script::new(&format!("{SETTLE}return settle()")),
            // KEYS: reservations, owner's list. ARGV: id, owned field, binding.
            bind: redis::Script::new(
                r"
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 or redis.call('HEXISTS', KEYS[2], ARGV[2]) == 0 then
  return 0
end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
return 1
",
            ),
            // KEYS: buckets, reservations, owner's list[, owner's alive key (one server; a
            // cluster checks it before, on its own slot)].
            // ARGV: id, commit (1/0), owned field, binding as listed.
            settle_orphan: redis::Script::new(&format!(
                r"{SETTLE}
if #KEYS >= 4 and redis.call('EXISTS', KEYS[4]) == 1 then return 0 end
if redis.call('HGET', KEYS[3], ARGV[3]) ~= ARGV[4] then return 0 end
return settle()
"
            )),
            charge: redis::Script::new(&format!(
                r"{CHARGE}
local refused, held = charge(KEYS[1], KEYS[2], ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4])
if refused then return {{refused, held}} end
return {{0, 0}}
"
            )),
        }
    }
}

/// Hold `delta` more bytes for `plugin` in the `usage` hash and the `total` key; growth past
/// `quota` (the plugin's) or `total_quota` is refused: `2, held` or `3, held in all`.
const CHARGE: &str = r"
local function charge(usage, total, plugin, delta, quota, total_quota)
  if delta > 0 then
    local used = tonumber(redis.call('HGET', usage, plugin) or '0')
    if used + delta > tonumber(quota) then return 2, used end
    local all = tonumber(redis.call('GET', total) or '0')
    if all + delta > tonumber(total_quota) then return 3, all end
  end
  if redis.call('HINCRBY', usage, plugin, delta) < 0 then redis.call('HSET', usage, plugin, 0) end
  if redis.call('INCRBY', total, delta) < 0 then redis.call('SET', total, 0) end
  return nil, 0
end
";

/// Settle reservation ARGV[1] of KEYS[2] into KEYS[1] (commit when ARGV[2] is `1`) and take
/// it off its owner's list (KEYS[3], field ARGV[3]).
const SETTLE: &str = r"
local function settle()
  redis.call('HDEL', KEYS[3], ARGV[3])
  local entry = redis.call('HGET', KEYS[2], ARGV[1])
  if not entry then return 0 end
  redis.call('HDEL', KEYS[2], ARGV[1])
  if ARGV[2] == '1' then
    local bucket, amount = string.match(entry, '^(%d+):(%d+)$')
    redis.call('HINCRBY', KEYS[1], bucket, amount)
  end
  return 1
end
";
