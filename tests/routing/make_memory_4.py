# Writes etom-memory-4.jsonl (tests/routing/README.md) from the requests below, checking that every
# tool named exists in the ETOM catalog given as the first argument. Written 2026-11-28 (thirteenth
# round) after the memory reading's final form and committed before it was measured: its figure on
# words no form was built on. Groups as in make_memory.py.
from set_writer import t, write
def tools(*pairs): return [t(s,n) for s,n in pairs]
ADD=tools(("mem0 Memory System","add_memory"),("Letta MCP Server","create_memory_block"),("mcp-memory-libsql","create_entities"),("Knowledge Graph Memory Server","add_observations"),("Memory Box MCP Server","save_memory"))
SEARCH=tools(("mem0 Memory System","search_memory"),("mcp-memory-libsql","search_nodes"),("Knowledge Graph Memory Server","search_nodes"),("Knowledge Graph Memory Server","open_nodes"),("Memory Box MCP Server","search_memories"),("Basic Memory","search"),("cognee MCP server","search"))
DELETE=tools(("mem0 Memory System","delete_memory"),("mcp-memory-libsql","delete_entity"),("Knowledge Graph Memory Server","delete_entities"),("Knowledge Graph Memory Server","delete_observations"),("Basic Memory","delete_note"))
Q=[
 ("Hold on to this: my passport expires in March 2027", ADD),
 ("Keep track of the fact that Omar prefers morning meetings", ADD),
 ("FYI, I moved to Leeds last month", ADD),
 ("Have I ever told you which team I support?", SEARCH),
 ("What do you know about my sister?", SEARCH),
 ("Is my blood type something you have stored?", SEARCH),
 ("Delete whatever you remember about my ex", DELETE),
 ("I don't want you to remember my salary anymore", DELETE),
]
write("etom-memory-4.jsonl", "MH", [(q, [group]) for q, group in Q])
