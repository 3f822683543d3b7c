"""The turn queue's Lua scripts (:mod:`adapters.chat.queue_redis`): each runs as one atomic
step in Redis, so no other worker sees the queue half changed.

KEYS[1] is the stream; KEYS[2], where used, the thread's line of queued entry ids;
KEYS[3], where used, the entry's notes (a hash: what its worker noted while answering).
KEYS[4], where used, the channel on which a finished job names its thread.
"""

# Queue a job and remember its place in its thread, in one step: a job is never in the
# stream without its place in line, or the other way round.
SUBMIT = """
local id = redis.call('XADD', KEYS[1], '*', 'job', ARGV[1])
redis.call('RPUSH', KEYS[2], id)
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return id
"""

# May this job run? Yes at the head of its thread's line. A head whose entry is gone
# from the stream (finished by a worker whose last step failed) is dropped, so a
# thread never waits on a job that no longer exists.
MAY_RUN = """
while true do
  local head = redis.call('LINDEX', KEYS[2], 0)
  if not head or head == ARGV[1] then return 1 end
  if #redis.call('XRANGE', KEYS[1], head, head) > 0 then return 0 end
  redis.call('LPOP', KEYS[2])
end
"""

# Still ours? Then reset its idle time (so no other worker takes it over). A job some
# other worker has claimed meanwhile is theirs now: return 0.
HEARTBEAT = """
local pending = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[3], ARGV[3], 1)
if #pending == 0 or pending[1][2] ~= ARGV[2] then return 0 end
redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[3], 'JUSTID')
return 1
"""

# Done: acknowledge, delete, forget its notes and give the thread's next job its turn,
# in one step; then say so, so a job waiting for this thread on any worker looks again
# at once instead of polling.
FINISH = """
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])
redis.call('LREM', KEYS[2], 1, ARGV[2])
redis.call('DEL', KEYS[3])
if ARGV[3] ~= '' then redis.call('PUBLISH', KEYS[4], ARGV[3]) end
return 1
"""
