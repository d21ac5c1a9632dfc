import { unlinkLua } from "./redis-tree-lua.js";

/**
 * KEYS: a released child's link, its run hash, then the keys holding it (`treePlaceOf`: its
 * parent's run hash, and its root's `treeDeep` when the root is another run). ARGV: the child's
 * id, its field in its parent's run hash. When no run of the child is stored (its hash holds no
 * record), its link goes, and its places with it (uncounted if it ran there: linked again
 * meanwhile by a start that can no longer store it); returns 1. A stored run keeps them all
 * (0): it is a child of its tree, whatever its call came to; so does a link gone already (0:
 * the places were read from it).
 *
 * Safe against a start racing the release: a child run is stored only while its link is
 * (CREATE_RUNS checks it in the write that stores the run), and both scripts touch keys of one
 * slot, so either the run was stored first (and the link stays), or the link goes first (and
 * the start stores nothing), until a later start links the child again.
 */
export const DROP_UNSTARTED_LUA = `
${unlinkLua}
if redis.call("HEXISTS", KEYS[2], "record") == 1 or redis.call("EXISTS", KEYS[1]) == 0 then
  return 0
end
if KEYS[3] then unlinkFrom(KEYS[3], ARGV[2]) end
if KEYS[4] then redis.call("SREM", KEYS[4], ARGV[1]) end
redis.call("DEL", KEYS[1])
return 1
`;
