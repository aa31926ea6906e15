# Writes etom-tasks.jsonl (tests/routing/README.md) from the requests below, checking that every
# tool named exists in the ETOM catalog given as the first argument. Written 2026-11-28 (eleventh
# round) and committed before it was measured: a person's to-dos and reminders in everyday words
# ("remind me to …", "what's on my plate today", "tick off …"), each with one group: every tool of
# the catalog's general to-do servers (Todoist, the Todo List server, DeltaTask) that does it.
from set_writer import t, write
def tools(*pairs): return [t(s,n) for s,n in pairs]
from catalog_groups import TODO_ADD as ADD
LIST=tools(("Enhanced Todoist MCP Server Extended","todoist_get_tasks"),("Todo List MCP Server","list-todos"),("Todo List MCP Server","list-active-todos"))
DONE=tools(("Enhanced Todoist MCP Server Extended","todoist_complete_task"),("Todo List MCP Server","complete-todo"))
Q=[
 ("Remind me to call the plumber tomorrow morning", ADD),
 ("Remember to buy milk on the way home", ADD),
 ("Put 'submit expense report' on my todo list for Friday", ADD),
 ("Don't let me forget to renew my passport next month", ADD),
 ("Add 'book flights to Lisbon' to my tasks", ADD),
 ("I need to pay the electricity bill by the 5th, note it down as a to-do", ADD),
 ("What's on my plate today?", LIST),
 ("What do I still have to do this week?", LIST),
 ("Show me my open to-dos", LIST),
 ("Tick off 'call the plumber', it's done", DONE),
 ("I've finished the expense report, mark it as done", DONE),
 ("Cross 'buy milk' off my list", DONE),
]
write("etom-tasks.jsonl", "TK", [(q, [group]) for q, group in Q])
