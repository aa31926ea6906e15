# Writes etom-reminders.jsonl (tests/routing/README.md) from the requests below, checking that every
# tool named exists in the ETOM catalog given as the first argument. Written 2026-11-28 (twelfth
# round) and committed before it was measured: asking to be reminded in everyday words ("nudge me
# …", "don't let me forget to …", "ping me on Friday about …"), each with one group: every tool of
# the catalog's general to-do servers that adds a to-do (Todoist's quick add takes reminders), as
# in make_tasks.py.
from catalog_groups import TODO_ADD as ADD
from set_writer import write
Q = [
    ("Nudge me on Friday to send the invoices", [ADD]),
    ("Don't let me forget to water the plants tonight", [ADD]),
    ("Ping me tomorrow at 9 about the car insurance renewal", [ADD]),
    ("Can you make sure I remember to call grandma on Sunday?", [ADD]),
    ("Set a reminder to take my medication at 8pm", [ADD]),
    ("I keep forgetting to back up my laptop, remind me every Monday", [ADD]),
    ("Jog my memory next week about renewing the domain", [ADD]),
    ("Give me a heads-up on the 30th to cancel the free trial", [ADD]),
    ("Make a note to myself: pick up the dry cleaning after work", [ADD]),
    ("Remind me in two hours to check the oven", [ADD]),
    ("I need to return the library books by Thursday, keep me on track", [ADD]),
    ("Add 'renew passport' to my reminders for next month", [ADD]),
]
write("etom-reminders.jsonl", "RM", Q)
