# Writes etom-memory.jsonl (tests/routing/README.md) from the requests below, checking that every
# tool named exists in the ETOM catalog given as the first argument. Written 2026-11-28 (eleventh
# round) AFTER the rule for everyday words of memory (docs/routing.md, "Words for memory") was
# shaped on the dev catalog's memory server, and committed before it was measured here: whether it
# carries to the ETOM catalog's seven memory servers, whose tools speak of memories, memory
# blocks, notes and knowledge graphs, and to words it does not list ("keep in mind", "what did I
# tell you").
from set_writer import t, write
def tools(*pairs): return [t(s,n) for s,n in pairs]
ADD=tools(("mem0 Memory System","add_memory"),("Letta MCP Server","create_memory_block"),("mcp-memory-libsql","create_entities"),("Knowledge Graph Memory Server","add_observations"),("Memory Box MCP Server","save_memory"))
SEARCH=tools(("mem0 Memory System","search_memory"),("mcp-memory-libsql","search_nodes"),("Knowledge Graph Memory Server","search_nodes"),("Knowledge Graph Memory Server","open_nodes"),("Memory Box MCP Server","search_memories"),("Basic Memory","search"),("cognee MCP server","search"))
DELETE=tools(("mem0 Memory System","delete_memory"),("mcp-memory-libsql","delete_entity"),("Knowledge Graph Memory Server","delete_entities"),("Knowledge Graph Memory Server","delete_observations"),("Basic Memory","delete_note"))
Q=[
 ("Remember that my sister's birthday is on the 14th of May", ADD),
 ("Please memorize: our staging server is staging-2.internal", ADD),
 ("Keep in mind that I prefer window seats on flights", ADD),
 ("Don't forget that the quarterly review moved to Friday", ADD),
 ("Remember my new phone number, it's +1 555 0199", ADD),
 ("What do you remember about my coffee order?", SEARCH),
 ("Do you recall what we decided about the logo colors?", SEARCH),
 ("What did I tell you about my dentist appointment?", SEARCH),
 ("Recall my notes on the vendor contract", SEARCH),
 ("Forget my old home address", DELETE),
 ("Forget that I said I like jazz", DELETE),
 ("Please forget everything about the Falcon project", DELETE),
]
write("etom-memory.jsonl", "ME", [(q, [group]) for q, group in Q])
