# Writes etom-memory-3.jsonl (tests/routing/README.md) from the requests below, checking that every
# tool named exists in the ETOM catalog given as the first argument. Written 2026-11-28 (thirteenth
# round) after the memory reading was widened on etom-memory-2.jsonl, and committed before it was
# measured: its figure on words no form was built on. Groups as in make_memory.py.
from set_writer import t, write
def tools(*pairs): return [t(s,n) for s,n in pairs]
ADD=tools(("mem0 Memory System","add_memory"),("Letta MCP Server","create_memory_block"),("mcp-memory-libsql","create_entities"),("Knowledge Graph Memory Server","add_observations"),("Memory Box MCP Server","save_memory"))
SEARCH=tools(("mem0 Memory System","search_memory"),("mcp-memory-libsql","search_nodes"),("Knowledge Graph Memory Server","search_nodes"),("Knowledge Graph Memory Server","open_nodes"),("Memory Box MCP Server","search_memories"),("Basic Memory","search"),("cognee MCP server","search"))
DELETE=tools(("mem0 Memory System","delete_memory"),("mcp-memory-libsql","delete_entity"),("Knowledge Graph Memory Server","delete_entities"),("Knowledge Graph Memory Server","delete_observations"),("Basic Memory","delete_note"))
Q=[
 ("For future reference, my shoe size is 44", ADD),
 ("Please take note: the kids' school starts at 8:15", ADD),
 ("Did I ever tell you my wife's name?", SEARCH),
 ("What have I told you about my knee injury?", SEARCH),
 ("Do you still have my old address on file?", SEARCH),
 ("Erase everything you remember about the Zephyr deal", DELETE),
 ("Stop remembering my work schedule", DELETE),
 ("Just so you know, I'm allergic to penicillin", ADD),
]
write("etom-memory-3.jsonl", "MG", [(q, [group]) for q, group in Q])
