# Writes etom-memory.jsonl (tests/routing/README.md) from the requests below, checking that every
# tool named exists in the ETOM catalog given as the first argument. Written 2026-11-28 (eleventh
# round) AFTER the rule for everyday words of memory (docs/routing.md, "Words for memory") was
# shaped on the dev catalog's memory server, and committed before it was measured here: whether it
# carries to the ETOM catalog's seven memory servers, whose tools speak of memories, memory
# blocks, notes and knowledge graphs, and to words it does not list ("keep in mind", "what did I
# tell you").
from catalog_groups import MEMORY_ADD as ADD, MEMORY_DELETE as DELETE, MEMORY_SEARCH as SEARCH
from set_writer import write
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
