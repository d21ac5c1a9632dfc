// What the objects new in a heap snapshot retain, against an earlier snapshot of the same
// process (V8 keeps an object's id across snapshots). Prints, for the objects only in <after>:
// self bytes by type and constructor, and the retained bytes of each new subgraph's root (a new
// object dominated by an old one), grouped by its old owner, the edge and its own constructor.
//
//   node --max-old-space-size=4096 bench/runtime/snapshot-diff.mjs <before> <after> [per=256] [top=40]
import { readFileSync } from "node:fs";

const [beforePath, afterPath, perArgument = "256", topArgument = "40"] = process.argv.slice(2);
const per = Number(perArgument);
const top = Number(topArgument);

function load(path) {
  const { snapshot, nodes, edges, strings, locations } = JSON.parse(readFileSync(path, "utf8"));
  const { node_fields, edge_fields, node_types, edge_types } = snapshot.meta;
  return {
    nodes,
    edges,
    locations,
    strings,
    nodeWidth: node_fields.length,
    edgeWidth: edge_fields.length,
    nodeTypes: node_types[0],
    edgeTypes: edge_types[0],
    field: Object.fromEntries(node_fields.map((name, index) => [name, index])),
  };
}

function ids(heap) {
  const set = new Set();
  for (let at = 0; at < heap.nodes.length; at += heap.nodeWidth)
    set.add(heap.nodes[at + heap.field.id]);
  return set;
}

const before = ids(load(beforePath));
const heap = load(afterPath);
const { nodes, edges, strings, locations, nodeWidth, edgeWidth, nodeTypes, edgeTypes, field } =
  heap;
const count = nodes.length / nodeWidth;
const firstEdge = new Uint32Array(count + 1);
for (let node = 0, edge = 0; node < count; node++) {
  firstEdge[node] = edge;
  edge += nodes[node * nodeWidth + field.edge_count] * edgeWidth;
}
firstEdge[count] = edges.length;
const isNew = new Uint8Array(count);
const selfSize = new Float64Array(count);
for (let node = 0; node < count; node++) {
  isNew[node] = before.has(nodes[node * nodeWidth + field.id]) ? 0 : 1;
  selfSize[node] = nodes[node * nodeWidth + field.self_size];
}
const typeOf = (node) => nodeTypes[nodes[node * nodeWidth + field.type]];
const nameOf = (node) => {
  const type = typeOf(node);
  const name = strings[nodes[node * nodeWidth + field.name]];
  if (type === "string" || type === "concatenated string" || type === "sliced string")
    return "(string)";
  if (type === "number") return "(number)";
  if (name === "system / Context") return `Context{${contextVariables(node)}}`;
  if (name === "Object" && type === "object") return `Object{${propertyNames(node)}}`;
  return type === "object" || type === "native" ? name : `(${type}) ${name.slice(0, 40)}`;
};
function propertyNames(node) {
  const names = [];
  for (let edge = firstEdge[node]; edge < firstEdge[node + 1]; edge += edgeWidth) {
    if (edgeTypes[edges[edge]] === "property") names.push(strings[edges[edge + 1]]);
  }
  return names
    .filter((name) => name !== "__proto__")
    .slice(0, 5)
    .join(",");
}
function contextVariables(node) {
  const names = [];
  for (let edge = firstEdge[node]; edge < firstEdge[node + 1]; edge += edgeWidth) {
    if (edgeTypes[edges[edge]] === "context") names.push(strings[edges[edge + 1]]);
  }
  return names.slice(0, 6).join(",");
}
const edgeName = (edge) => {
  const type = edgeTypes[edges[edge]];
  const value = edges[edge + 1];
  if (type === "element" || type === "hidden") return `[${type}]`;
  return `${type}:${String(strings[value])
    .replace(/ @\d+/g, "")
    .replace(/^\d+ \/ /, "")}`;
};
const skip = (edge) => edgeTypes[edges[edge]] === "weak";

// Dominators (Cooper, Harvey and Kennedy's iterative algorithm over a reverse postorder).
const order = new Int32Array(count).fill(-1);
const post = [];
{
  const stack = [0];
  const cursor = new Uint32Array(count);
  order[0] = -2;
  for (let node = 0; node < count; node++) cursor[node] = firstEdge[node];
  while (stack.length > 0) {
    const node = stack.at(-1);
    if (cursor[node] < firstEdge[node + 1]) {
      const edge = cursor[node];
      cursor[node] += edgeWidth;
      if (skip(edge)) continue;
      const to = edges[edge + 2] / nodeWidth;
      if (order[to] === -1) {
        order[to] = -2;
        stack.push(to);
      }
    } else {
      stack.pop();
      order[node] = post.length;
      post.push(node);
    }
  }
}
const preds = Array.from({ length: count }, () => []);
for (let node = 0; node < count; node++) {
  if (order[node] < 0) continue;
  for (let edge = firstEdge[node]; edge < firstEdge[node + 1]; edge += edgeWidth) {
    if (skip(edge)) continue;
    preds[edges[edge + 2] / nodeWidth].push(node);
  }
}
const idom = new Int32Array(count).fill(-1);
idom[0] = 0;
const intersect = (a, b) => {
  while (a !== b) {
    while (order[a] < order[b]) a = idom[a];
    while (order[b] < order[a]) b = idom[b];
  }
  return a;
};
for (let changed = true; changed; ) {
  changed = false;
  for (let index = post.length - 2; index >= 0; index--) {
    const node = post[index];
    let dominator = -1;
    for (const pred of preds[node]) {
      if (idom[pred] === -1) continue;
      dominator = dominator === -1 ? pred : intersect(pred, dominator);
    }
    if (dominator !== -1 && idom[node] !== dominator) {
      idom[node] = dominator;
      changed = true;
    }
  }
}
const retained = Float64Array.from(selfSize);
for (const node of post) if (node !== 0 && idom[node] >= 0) retained[idom[node]] += retained[node];

const bump = (map, key, bytes) => {
  const entry = map.get(key) ?? { bytes: 0, count: 0 };
  entry.bytes += bytes;
  entry.count++;
  map.set(key, entry);
};
const bySelf = new Map();
const byRoot = new Map();
let total = 0;
for (let node = 0; node < count; node++) {
  if (!isNew[node]) continue;
  total += selfSize[node];
  bump(bySelf, nameOf(node), selfSize[node]);
  const owner = idom[node];
  if (owner < 0 || isNew[owner]) continue;
  let via = "?";
  for (let edge = firstEdge[owner]; edge < firstEdge[owner + 1]; edge += edgeWidth) {
    if (edges[edge + 2] / nodeWidth === node) {
      via = edgeName(edge);
      break;
    }
  }
  bump(byRoot, `${nameOf(owner)} -${via}-> ${nameOf(node)}`, retained[node]);
}
// Shortest retaining paths from the roots (breadth first): each new object is put down to the
// place its path enters the new objects (old owner -edge-> first new object, and the next one).
const parent = new Int32Array(count).fill(-1);
const parentEdge = new Int32Array(count).fill(-1);
{
  parent[0] = 0;
  let frontier = [0];
  while (frontier.length > 0) {
    const next = [];
    for (const node of frontier) {
      for (let edge = firstEdge[node]; edge < firstEdge[node + 1]; edge += edgeWidth) {
        if (skip(edge)) continue;
        const to = edges[edge + 2] / nodeWidth;
        if (parent[to] !== -1) continue;
        parent[to] = node;
        parentEdge[to] = edge;
        next.push(to);
      }
    }
    frontier = next;
  }
}
const byEntry = new Map();
for (let node = 0; node < count; node++) {
  if (!isNew[node] || parent[node] === -1) continue;
  const path = [node];
  while (isNew[parent[path.at(-1)]] && path.length < 10_000) path.push(parent[path.at(-1)]);
  const entry = path.at(-1);
  const second = path.length > 1 ? path.at(-2) : -1;
  const key = `${nameOf(parent[entry])} -${edgeName(parentEdge[entry])}-> ${nameOf(entry)}${
    second >= 0 ? ` -${edgeName(parentEdge[second])}-> ${nameOf(second)}` : ""
  }`;
  bump(byEntry, key, selfSize[node]);
}
// Each new object by its immediate dominator (what alone keeps it) and the edge from it.
const byOwner = new Map();
for (let node = 0; node < count; node++) {
  if (!isNew[node] || idom[node] < 0) continue;
  const owner = idom[node];
  let via = "(indirect)";
  for (let edge = firstEdge[owner]; edge < firstEdge[owner + 1]; edge += edgeWidth) {
    if (edges[edge + 2] / nodeWidth === node) {
      via = edgeName(edge);
      break;
    }
  }
  bump(byOwner, `${nameOf(owner)} -${via}-> ${nameOf(node)}`, selfSize[node]);
}
// Where each closure's code is (script id:line:column), from the snapshot's locations.
const where = new Map();
for (let at = 0; at < (locations?.length ?? 0); at += 4) {
  where.set(
    locations[at] / nodeWidth,
    `${locations[at + 1]}:${locations[at + 2] + 1}:${locations[at + 3]}`,
  );
}
// Suspended async functions (generators) by function name, with their registers' size.
const frames = new Map();
for (let node = 0; node < count; node++) {
  if (!isNew[node] || nameOf(node) !== "Generator") continue;
  let name = "?";
  let bytes = selfSize[node];
  for (let edge = firstEdge[node]; edge < firstEdge[node + 1]; edge += edgeWidth) {
    const to = edges[edge + 2] / nodeWidth;
    const label = edgeName(edge);
    if (label === "internal:function") {
      name = `${strings[nodes[to * nodeWidth + field.name]] || "(anonymous)"} @${where.get(to) ?? "?"}`;
    }
    if (label === "internal:parameters_and_registers") bytes += selfSize[to];
  }
  bump(frames, name, bytes);
}
// New closures by name and place (script id:line:column).
const closures = new Map();
for (let node = 0; node < count; node++) {
  if (!isNew[node] || typeOf(node) !== "closure") continue;
  bump(
    closures,
    `${strings[nodes[node * nodeWidth + field.name]] || "(anonymous)"} @${where.get(node) ?? "?"}`,
    selfSize[node],
  );
}
const show = (title, map) => {
  console.log(`\n${title}`);
  for (const [key, { bytes, count: n }] of [...map]
    .sort((a, b) => b[1].bytes - a[1].bytes)
    .slice(0, top)) {
    console.log(
      `${String(Math.round(bytes / per)).padStart(7)} B/run ${String((n / per).toFixed(2)).padStart(7)}/run  ${key}`,
    );
  }
};
console.log(`new objects: ${Math.round(total / per)} B a run (${per} runs)`);
// HEAP_INSPECT=<label prefix>: one new object of that label, its retainers and what it dominates.
const inspect = process.env.HEAP_INSPECT;
if (inspect) {
  const children = Array.from({ length: count }, () => []);
  for (let node = 1; node < count; node++) if (idom[node] >= 0) children[idom[node]].push(node);
  let shown = 0;
  for (let node = 0; node < count && shown < Number(process.env.HEAP_INSPECT_COUNT ?? 1); node++) {
    if (!isNew[node] || !nameOf(node).startsWith(inspect)) continue;
    shown++;
    console.log(`\n${nameOf(node)} self ${selfSize[node]} retained ${retained[node]}; retainers:`);
    for (const pred of preds[node]) {
      for (let edge = firstEdge[pred]; edge < firstEdge[pred + 1]; edge += edgeWidth) {
        if (edges[edge + 2] / nodeWidth === node)
          console.log(`  ${isNew[pred] ? "new" : "old"} ${nameOf(pred)} -${edgeName(edge)}->`);
      }
    }
    const below = new Map();
    const stack = [...children[node]];
    while (stack.length > 0) {
      const next = stack.pop();
      bump(below, nameOf(next), selfSize[next]);
      stack.push(...children[next]);
    }
    console.log("  dominates:");
    for (const [key, { bytes, count: n }] of [...below]
      .sort((a, b) => b[1].bytes - a[1].bytes)
      .slice(0, top)) {
      console.log(`  ${String(bytes).padStart(7)} B ${String(n).padStart(4)}x  ${key}`);
    }
    console.log("  outgoing:");
    for (let edge = firstEdge[node]; edge < firstEdge[node + 1]; edge += edgeWidth) {
      const to = edges[edge + 2] / nodeWidth;
      console.log(
        `    -${edgeName(edge)}-> ${nameOf(to)} (retained ${retained[to]}${idom[to] === node ? ", dominated" : ""})`,
      );
    }
  }
}
show("self size of new objects, by constructor", bySelf);
show("retained by each new subgraph's root, by old owner -edge-> root", byRoot);
show("suspended async functions (generator + registers)", frames);
show("closures by place", closures);
show("self size by immediate dominator -edge-> object", byOwner);
show("self size by where the shortest path from the roots enters the new objects", byEntry);
