// Shared by the lock scripts of one server (`lock-lua.ts`) and of a quorum's masters.

/**
 * A replica cannot say a lock is not ours: during a failover the old master, demoted and
 * resyncing, answers with an empty or stale dataset. So before reporting "not the owner",
 * scripts check that they run on a master, and otherwise fail like any transient error
 * (the client retries on the new master until the lease deadline).
 */
export const ON_REPLICA = `
local function on_replica()
  if string.find(redis.call('INFO', 'replication'), 'role:slave', 1, true) then
    return redis.error_reply('READONLY this node is a replica: lock ownership cannot be checked here')
  end
end
`;
