# Writes etom-memory-2.jsonl (tests/routing/README.md) from the requests below, checking that every
# tool named exists in the ETOM catalog given as the first argument. Written 2026-11-28 (thirteenth
# round) and committed before it was measured: other everyday words to the assistant's memory than
# the memory reading (registry/src/routing/memory.rs) lists, to find its next gap. Groups as in
# make_memory.py.
from set_writer import t, write
def tools(*pairs): return [t(s,n) for s,n in pairs]
ADD=tools(("mem0 Memory System","add_memory"),("Letta MCP Server","create_memory_block"),("mcp-memory-libsql","create_entities"),("Knowledge Graph Memory Server","add_observations"),("Memory Box MCP Server","save_memory"))
SEARCH=tools(("mem0 Memory System","search_memory"),("mcp-memory-libsql","search_nodes"),("Knowledge Graph Memory Server","search_nodes"),("Knowledge Graph Memory Server","open_nodes"),("Memory Box MCP Server","search_memories"),("Basic Memory","search"),("cognee MCP server","search"))
DELETE=tools(("mem0 Memory System","delete_memory"),("mcp-memory-libsql","delete_entity"),("Knowledge Graph Memory Server","delete_entities"),("Knowledge Graph Memory Server","delete_observations"),("Basic Memory","delete_note"))
Q=[
 ("Make a mental note that Priya is vegetarian", ADD),
 ("Bear in mind that the office closes early on Fridays", ADD),
 ("What did I tell you about the boiler?", SEARCH),
 ("Have I mentioned my peanut allergy to you before?", SEARCH),
 ("From now on, know that I go by Sam", ADD),
 ("Store this fact for later: the router is in the hallway cupboard", ADD),
 ("Wipe what you know about my old job", DELETE),
 ("Where did I say I parked last time?", SEARCH),
 ("You can drop the stuff about my ex-landlord from memory", DELETE),
 ("Learn that my manager is called Ingrid", ADD),
]
write("etom-memory-2.jsonl", "MF", [(q, [group]) for q, group in Q])
