"""The Lua scripts behind :class:`agent.cache.answer_redis.RedisAnswerCache`.

An entry lives in several keys (its hash, the scope's exact-match hash and
index, one set per cited document). Scripts change them together, so a worker
never sees half an entry and two workers storing the same question at once
cannot leave an orphan behind.

Keys are built inside the scripts from ``base`` (``<prefix>cache:``) rather than
all passed in ``KEYS``: which keys an entry touches (its documents, the replaced
entry's) is only known once the script has read them. That is fine on one Redis
server, which is what we support; a Redis Cluster would need a hash tag in the
prefix (``{teamrag}:``) to keep every key on one shard.

Layout under ``base``: ``seq`` (entry ids), ``epoch`` (changes when the data is
lost or cleared), ``e:<id>`` (entry hash), ``exact:<scope>`` (hash: normalised
question -> id), ``scope:<scope>`` (sorted set of ids, scored by id: ids grow with
time, so the lowest are the oldest), ``doc:<doc_id>`` (set of ids citing it).
Every key but ``seq`` and ``epoch`` expires with the entries' TTL.
"""

from __future__ import annotations

# Removes one entry and its links; 0 if its hash was already gone (expired by
# Redis or removed by another worker). A replaced entry's exact-match slot may
# already name the newer entry: it is only cleared if it still names this one.
_DROP = """
local function drop(base, id)
  local entry = base .. 'e:' .. id
  local f = redis.call('hmget', entry, 'scope', 'norm', 'docs')
  if not f[1] then return 0 end
  redis.call('del', entry)
  redis.call('zrem', base .. 'scope:' .. f[1], id)
  local exact = base .. 'exact:' .. f[1]
  if redis.call('hget', exact, f[2]) == id then redis.call('hdel', exact, f[2]) end
  for _, doc in ipairs(cjson.decode(f[3])) do
    redis.call('srem', base .. 'doc:' .. doc, id)
  end
  return 1
end
"""

# ARGV: base, scope, norm, now, ttl ms, max entries per scope, question, answer,
# sources, language, versions (JSON), doc ids (JSON list), dim, vector (float32 bytes).
# Sweeps the scope's expired entries (oldest first, a bounded number per call, so a
# store never stalls Redis), replaces the entry of the same question, writes the new
# one with its links, then evicts the scope's oldest beyond the cap. Returns the id.
STORE = (
    _DROP
    + """
local base, scope, norm = ARGV[1], ARGV[2], ARGV[3]
local now, ttl_ms, cap = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local index, exact = base .. 'scope:' .. scope, base .. 'exact:' .. scope
for _, id in ipairs(redis.call('zrange', index, 0, 99)) do
  local created = redis.call('hget', base .. 'e:' .. id, 'created')
  if created and tonumber(created) >= now - ttl_ms / 1000 then break end
  if drop(base, id) == 0 then redis.call('zrem', index, id) end
end
local old = redis.call('hget', exact, norm)
if old then
  if drop(base, old) == 0 then redis.call('zrem', index, old) end
end
local id = tostring(redis.call('incr', base .. 'seq'))
local entry = base .. 'e:' .. id
redis.call('hset', entry, 'scope', scope, 'norm', norm, 'question', ARGV[7],
  'answer', ARGV[8], 'sources', ARGV[9], 'language', ARGV[10], 'versions', ARGV[11],
  'docs', ARGV[12], 'dim', ARGV[13], 'vector', ARGV[14], 'created', ARGV[4])
redis.call('pexpire', entry, ttl_ms)
redis.call('hset', exact, norm, id)
redis.call('pexpire', exact, ttl_ms)
redis.call('zadd', index, id, id)
redis.call('pexpire', index, ttl_ms)
for _, doc in ipairs(cjson.decode(ARGV[12])) do
  redis.call('sadd', base .. 'doc:' .. doc, id)
  redis.call('pexpire', base .. 'doc:' .. doc, ttl_ms)
end
local over = redis.call('zcard', index) - cap
if over > 0 then
  for _, gone in ipairs(redis.call('zrange', index, 0, over - 1)) do
    if drop(base, gone) == 0 then redis.call('zrem', index, gone) end
  end
end
return id
"""
)

# ARGV: base, entry id. Drops one entry by id (expired, or citing a changed document):
# by id, because a fresh entry stored meanwhile under the same question has a new one.
DROP_ONE = _DROP + "return drop(ARGV[1], ARGV[2])"

# ARGV: base, doc ids... Drops every entry citing one of the documents; returns how
# many entries existed and were dropped (not counting links to already-expired ones).
INVALIDATE = (
    _DROP
    + """
local base, removed = ARGV[1], 0
for i = 2, #ARGV do
  local key = base .. 'doc:' .. ARGV[i]
  for _, id in ipairs(redis.call('smembers', key)) do removed = removed + drop(base, id) end
  redis.call('del', key)
end
return removed
"""
)

# ARGV: base, scope, highest id already loaded, a new epoch in case there is none.
# Returns {epoch, highest id in the index, id1, dim1, vector1, id2, ...} for the
# scope's entries above the given id, in one atomic step: the epoch read with the
# rows tells the caller whether its loaded ids still name the same entries (after a
# restart or clear, ids start again from 1).
REFRESH = """
local base = ARGV[1]
redis.call('set', base .. 'epoch', ARGV[4], 'NX')
local out = {redis.call('get', base .. 'epoch'), ARGV[3]}
local ids = redis.call('zrangebyscore', base .. 'scope:' .. ARGV[2], '(' .. ARGV[3], '+inf')
for _, id in ipairs(ids) do
  out[2] = id
  local f = redis.call('hmget', base .. 'e:' .. id, 'dim', 'vector')
  if f[1] and tonumber(f[1]) > 0 then
    out[#out + 1] = id
    out[#out + 1] = f[1]
    out[#out + 1] = f[2]
  end
end
return out
"""
