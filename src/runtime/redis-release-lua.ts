import { unlinkLua } from "./redis-tree-lua.js";

/**
 * KEYS: a released child's link, its run hash, then the `treeBelow` hashes holding it (its
 * parent's, and its root's when another: `treePlaceOf`). ARGV: the child's id. When no run of
 * the child is stored, its link goes, and its places in those hashes with it (uncounted if it
 * ran there: linked again meanwhile by a start that can no longer store it); returns 1. A
 * stored run keeps them all (0): it is a child of its tree, whatever its call came to; so does
 * a link gone already (0: the hashes were read from it).
 *
 * Safe against a start racing the release: a child run is stored only while its link is
 * (CREATE_RUNS checks it in the write that stores the run), and both scripts touch keys of one
 * slot, so either the run was stored first (and the link stays), or the link goes first (and
 * the start stores nothing), until a later start links the child again.
 */
export const DROP_UNSTARTED_LUA = `
${unlinkLua}
if redis.call("EXISTS", KEYS[2]) == 1 or redis.call("EXISTS", KEYS[1]) == 0 then return 0 end
for at = 3, #KEYS do unlinkFrom(KEYS[at], ARGV[1]) end
redis.call("DEL", KEYS[1])
return 1
`;
